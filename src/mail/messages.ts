import { escapeHtml } from '../dashboard/pages.js';
import { issueLinkToken } from '../dashboard/login-link.js';
import type { MailMessage } from '../infra/mail.js';
import type { Recorded } from '../kernel/event-catalog.js';
import type { MemberEvent } from '../members/events.js';
import { signToken } from '../members/tokens.js';

/**
 * What a mail in the outbox says, as recorded when its event was read:
 * everything but the links' tokens, which are signed again when it is sent
 * (the outbox holds nothing that would sign anyone in).
 */
export type MailEntry =
  | { kind: 'sign_in'; to: string; links: Array<{ link_id: string; account_id: string; expires_at: string }> }
  | { kind: 'sign_up'; to: string; request_id: string; expires_at: string }
  | { kind: 'invitation'; to: string; invitation_id: string; account_id: string; role: string; by_email: string | null; expires_at: string }
  | NotificationMail;

/**
 * A notification to a member about one object (decided by the notifier):
 * how many responses since the last one, and, when the member asked for
 * answers, the ids of the responses whose answers it shows (read when it is
 * sent, so an erased response shows nothing).
 */
export interface NotificationMail {
  kind: 'notification';
  to: string;
  mode: 'each' | 'digest';
  account_id: string;
  member_id: string;
  object_id: string;
  object_kind: 'widget' | 'form' | 'poll';
  object_title: string;
  count: number;
  /** The first and last response's times covered. */
  since: string;
  until: string;
  response_ids: string[];
  include_answers: boolean;
}

/** A response's answers as an email shows them: each question's title (else its id) and the answer as text. */
export type ShownAnswers = Array<{ submitted_at: string; answers: Array<[question: string, answer: string]> }>;

/** How long an unsubscribe link in a notification works: a year, so an old email's link still does. */
export const UNSUBSCRIBE_TTL_MS = 365 * 24 * 60 * 60_000;

const PLURAL = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

function renderNotification(entry: NotificationMail, context: RenderContext, now: Date): MailMessage {
  const unsubscribe = `${context.base}/notifications/unsubscribe?t=${signToken(context.key, 'unsubscribe', [entry.member_id, entry.object_id], new Date(now.getTime() + UNSUBSCRIBE_TTL_MS))}`;
  const page = `${context.base}/dashboard/${entry.object_kind}s/${entry.object_id}`;
  const what = entry.object_kind === 'poll' ? PLURAL(entry.count, 'vote', 'votes') : PLURAL(entry.count, 'response', 'responses');
  const subject = entry.mode === 'digest' ? `Daily digest: ${what} to ${entry.object_title}` : `New: ${what} to ${entry.object_title}`;
  const lead = entry.mode === 'digest' ? `${what} to ${entry.object_title} since the last digest.` : `${what} to ${entry.object_title}.`;
  const shown = entry.include_answers ? (context.answers ?? []) : [];
  const answerLines = shown.flatMap((response) => ['', `Response of ${response.submitted_at}:`, ...response.answers.map(([question, answer]) => `- ${question}: ${answer}`)]);
  const more = entry.include_answers && entry.count > shown.length ? [`(${entry.count - shown.length} more on the dashboard)`] : [];
  const footer = `You get this because you chose ${entry.mode === 'digest' ? 'a daily digest' : 'an email for each response'} of ${entry.object_title}. Unsubscribe: ${unsubscribe}`;
  const answersHtml = shown
    .map((response) => `<h2 style="font-size:16px">Response of ${escapeHtml(response.submitted_at)}</h2><dl>${response.answers.map(([q, a]) => `<dt style="font-weight:bold">${escapeHtml(q)}</dt><dd>${escapeHtml(a)}</dd>`).join('')}</dl>`)
    .join('\n');
  const body = [
    `<h1 style="font-size:20px">${escapeHtml(subject)}</h1>`,
    `<p>${escapeHtml(lead)}</p>`,
    `<p><a href="${escapeHtml(page)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:6px">See them on the dashboard</a></p>`,
    answersHtml,
    ...more.map((line) => `<p>${escapeHtml(line)}</p>`),
    `<p style="font-size:12px;color:#4b5563">You get this because you chose ${entry.mode === 'digest' ? 'a daily digest' : 'an email for each response'} of ${escapeHtml(entry.object_title)}. <a href="${escapeHtml(unsubscribe)}">Unsubscribe</a></p>`,
  ];
  return {
    to: entry.to,
    subject,
    text: [lead, '', `See them: ${page}`, ...answerLines, ...more, '', footer, ''].join('\n'),
    html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:sans-serif;line-height:1.5;color:#111827">${body.join('\n')}</body></html>`,
    // RFC 8058: a mail client's one-click unsubscribe POSTs to the link, with no session.
    headers: { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}

/** The events the mail outbox reads: the members' (sign-in links and invitations). The feed holds every feature's events; the others pass by. */
export type MailReads = MemberEvent;

/** The mails an event asks for; none for most. `byEmail` names who made a change, when it was a member. */
export function mailsOf(event: Recorded<MailReads>, byEmail: (by: string) => string | null): MailEntry[] {
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
  /** A notification's responses' answers, read when it is sent (only when its member asked for answers). */
  answers?: ShownAnswers;
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
    case 'notification':
      return renderNotification(entry, context, now);
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
