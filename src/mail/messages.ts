import { escapeHtml } from '../dashboard/pages.js';
import { issueLinkToken } from '../dashboard/login-link.js';
import type { DomainEvent } from '../domain-events.js';
import type { MailMessage } from '../infra/mail.js';
import type { Recorded } from '../kernel/event-catalog.js';
import { signToken } from '../members/tokens.js';

/**
 * What a mail in the outbox says, as recorded when its event was read:
 * everything but the links' tokens, which are signed again when it is sent
 * (the outbox holds nothing that would sign anyone in).
 */
export type MailEntry =
  | { kind: 'sign_in'; to: string; links: Array<{ link_id: string; account_id: string; expires_at: string }> }
  | { kind: 'sign_up'; to: string; request_id: string; expires_at: string }
  | { kind: 'invitation'; to: string; invitation_id: string; account_id: string; role: string; by_email: string | null; expires_at: string };

/** The mails an event asks for; none for most. `byEmail` names who made a change, when it was a member. */
export function mailsOf(event: Recorded<DomainEvent>, byEmail: (by: string) => string | null): MailEntry[] {
  switch (event.type) {
    case 'SignInRequested': {
      const { email, links, sign_up, request_id } = event.data;
      if (email === null) return [];
      const mails: MailEntry[] = [];
      if (links.length > 0) mails.push({ kind: 'sign_in', to: email, links: links.map(({ link_id, account_id, expires_at }) => ({ link_id, account_id, expires_at })) });
      if (sign_up) mails.push({ kind: 'sign_up', to: email, request_id, expires_at: sign_up.expires_at });
      return mails;
    }
    case 'MemberInvited': {
      const { email, invitation_id, account_id, role, expires_at, by } = event.data;
      return [{ kind: 'invitation', to: email, invitation_id, account_id, role, by_email: byEmail(by), expires_at }];
    }
    default:
      return [];
  }
}

export interface RenderContext {
  /** The service's public address, without a trailing slash. */
  base: string;
  /** The key login links and invitation tokens are signed with. */
  key: Buffer;
  accountName(accountId: string): string;
}

const minutesLeft = (expiresAt: string, now: Date) => Math.max(1, Math.round((Date.parse(expiresAt) - now.getTime()) / 60_000));

function html(title: string, paragraphs: string[], links: Array<{ label: string; url: string }>): string {
  const body = [
    `<h1 style="font-size:20px">${escapeHtml(title)}</h1>`,
    ...links.map((link) => `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(link.label)}</a></p>`),
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
  ];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif;line-height:1.5;color:#111827">${body.join('\n')}</body></html>`;
}

/** The email of an outbox entry, its links signed now. */
export function render(entry: MailEntry, context: RenderContext, now: Date): MailMessage {
  switch (entry.kind) {
    case 'sign_in': {
      const links = entry.links.map((link) => ({
        label: `Sign in to ${context.accountName(link.account_id)}`,
        url: `${context.base}/dashboard/login?t=${issueLinkToken(context.key, { linkId: link.link_id, accountId: link.account_id, expiresAt: new Date(link.expires_at) })}`,
      }));
      const minutes = minutesLeft(entry.links[0]!.expires_at, now);
      const note = [`Each link signs in once, within ${minutes} minutes.`, 'If you did not ask to sign in, ignore this email: nobody can sign in without the link.'];
      return {
        to: entry.to,
        subject: 'Your sign-in link',
        text: ['Sign in to the feedback dashboard:', '', ...links.map((link) => `${link.label}: ${link.url}`), '', ...note, ''].join('\n'),
        html: html('Sign in to the feedback dashboard', note, links),
      };
    }
    case 'sign_up': {
      const url = `${context.base}/dashboard/sign-up?t=${signToken(context.key, 'sign-up', [entry.request_id], new Date(entry.expires_at))}`;
      const note = [`The link creates a Free account for ${entry.to} and signs you in, within ${minutesLeft(entry.expires_at, now)} minutes.`, 'If you did not ask for an account, ignore this email.'];
      return {
        to: entry.to,
        subject: 'Create your feedback account',
        text: ['Create your feedback account:', '', url, '', ...note, ''].join('\n'),
        html: html('Create your feedback account', note, [{ label: 'Create my account', url }]),
      };
    }
    case 'invitation': {
      const name = context.accountName(entry.account_id);
      const url = `${context.base}/dashboard/invitations/accept?t=${signToken(context.key, 'invitation', [entry.invitation_id, entry.account_id], new Date(entry.expires_at))}`;
      const who = entry.by_email ? `${entry.by_email} invites you` : 'You are invited';
      const note = [`${who} to the account ${name} as ${entry.role}.`, `The invitation can be accepted once, until ${entry.expires_at.slice(0, 10)}.`, 'If you do not know this account, ignore this email.'];
      return {
        to: entry.to,
        subject: `Join ${name} on the feedback dashboard`,
        text: [...note.slice(0, 1), '', `Accept: ${url}`, '', ...note.slice(1), ''].join('\n'),
        html: html(`Join ${name}`, note, [{ label: 'Accept the invitation', url }]),
      };
    }
  }
}
