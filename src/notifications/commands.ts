import { NOTIFICATION_CHOICES, NOTIFICATION_SLACK } from '../../projections/notifications.js';
import { execute, load } from '../kernel/aggregate.js';
import type { Context } from '../kernel/context.js';
import { readToken } from '../members/tokens.js';
import { DEFAULT_CHOICE, notificationSettings, type Choice, type ObjectKind } from './settings.js';

type Deps = Pick<Context, 'commands' | 'readModels' | 'clock' | 'keys'>;

interface Target {
  accountId: string;
  objectId: string;
  kind: ObjectKind;
}

/** A member's own choice for an object (the dashboard: any role may choose for themself). */
export async function chooseNotifications(deps: Deps, target: Target, member: { id: string; email: string }, choice: Choice, requestId?: string): Promise<Choice> {
  const at = deps.clock();
  await execute(
    deps.commands,
    notificationSettings,
    target.objectId,
    { type: 'Choose', account_id: target.accountId, object_id: target.objectId, object_kind: target.kind, member_id: member.id, email: member.email, choice, via: 'dashboard', by: member.id, at: at.toISOString() },
    { actor: member.id, at, ...(requestId ? { requestId } : {}) },
  );
  return choice;
}

/** The object's Slack incoming-webhook address, or null to stop (admins and owners). */
export async function setSlack(deps: Deps, target: Target, url: string | null, by: string, requestId?: string): Promise<{ url: string | null }> {
  const at = deps.clock();
  await execute(
    deps.commands,
    notificationSettings,
    target.objectId,
    { type: 'SetSlack', account_id: target.accountId, object_id: target.objectId, object_kind: target.kind, url, by, at: at.toISOString() },
    { actor: by, at, ...(requestId ? { requestId } : {}) },
  );
  return { url };
}

/** The member and object an unsubscribe link names, checked (401 `unsubscribe_link_invalid`). */
export function readUnsubscribe(deps: Pick<Deps, 'keys' | 'clock'>, token: unknown): { memberId: string; objectId: string } {
  const [memberId, objectId] = readToken(deps.keys.loginLinks, 'unsubscribe', 2, token, deps.clock()) as [string, string];
  return { memberId, objectId };
}

/**
 * One-click unsubscribe: the link's member gets no more notifications of the
 * link's object. No session is needed (the link is signed); a second use, or
 * a member who has left since, changes nothing.
 */
export async function unsubscribe(deps: Deps, token: unknown, requestId?: string): Promise<void> {
  const { memberId, objectId } = readUnsubscribe(deps, token);
  const at = deps.clock();
  const state = await load(deps.commands, notificationSettings, objectId);
  const current = state.members.get(memberId);
  if (!current || current.mode === 'none') return;
  const { account_id, object_kind, email, mode: _mode, ...rest } = current;
  await execute(
    deps.commands,
    notificationSettings,
    objectId,
    { type: 'Choose', account_id, object_id: objectId, object_kind, member_id: memberId, email, choice: { ...rest, mode: 'none' }, via: 'unsubscribe', by: memberId, at: at.toISOString() },
    { actor: 'public', at, ...(requestId ? { requestId } : {}) },
  );
}

/** What the signed-in member gets of an object, and its Slack address. */
export async function notificationsOf(deps: Pick<Deps, 'readModels'>, objectId: string, memberId: string | null): Promise<{ mine: Choice; slack_url: string | null }> {
  const chosen = memberId === null ? null : await deps.readModels.get(NOTIFICATION_CHOICES, `${objectId}:${memberId}`);
  const slack = await deps.readModels.get(NOTIFICATION_SLACK, objectId);
  const mine: Choice = chosen
    ? { mode: chosen.mode as Choice['mode'], digest_hour: Number(chosen.digest_hour), time_zone: String(chosen.time_zone), include_answers: chosen.include_answers === true }
    : DEFAULT_CHOICE;
  return { mine, slack_url: typeof slack?.url === 'string' ? slack.url : null };
}
