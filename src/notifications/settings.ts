import type { Aggregate } from '../kernel/aggregate.js';
import type { NotificationEvent } from './events.js';

export type Mode = 'each' | 'digest' | 'none';
export type ObjectKind = 'widget' | 'form' | 'poll';

export interface Choice {
  mode: Mode;
  digest_hour: number;
  time_zone: string;
  include_answers: boolean;
}

/**
 * What a member gets before they choose: nothing. A colleague is not mailed
 * about an object they never asked about; turning it on is one choice on the
 * object's page. A daily digest comes at 09:00 UTC unless they pick an hour.
 */
export const DEFAULT_CHOICE: Choice = { mode: 'none', digest_hour: 9, time_zone: 'UTC', include_answers: false };

/** A member's choice, with what the unsubscribe link records again: the account, the object's kind, their address. */
export interface MemberChoice extends Choice {
  account_id: string;
  object_kind: ObjectKind;
  email: string;
}

export interface NotificationState {
  members: Map<string, MemberChoice>;
  slack_url: string | null;
}

export type NotificationCommand =
  | { type: 'Choose'; account_id: string; object_id: string; object_kind: ObjectKind; member_id: string; email: string; choice: Choice; via: 'dashboard' | 'unsubscribe'; by: string; at: string }
  | { type: 'SetSlack'; account_id: string; object_id: string; object_kind: ObjectKind; url: string | null; by: string; at: string };

const sameChoice = (a: Choice, b: Choice) => a.mode === b.mode && a.digest_hour === b.digest_hour && a.time_zone === b.time_zone && a.include_answers === b.include_answers;

export function evolve(state: NotificationState, event: NotificationEvent): NotificationState {
  if (event.type === 'NotificationsChosen') {
    const { mode, digest_hour, time_zone, include_answers, account_id, object_kind, email } = event.data;
    return { ...state, members: new Map(state.members).set(event.data.member_id, { mode, digest_hour, time_zone, include_answers, account_id, object_kind, email }) };
  }
  return { ...state, slack_url: event.data.url };
}

/** A choice the member already has records nothing: an unsubscribe link used twice is one event. */
export function decide(command: NotificationCommand, state: NotificationState): NotificationEvent[] {
  if (command.type === 'Choose') {
    const current = state.members.get(command.member_id) ?? DEFAULT_CHOICE;
    if (sameChoice(current, command.choice)) return [];
    const { account_id, object_id, object_kind, member_id, email, via, by, at } = command;
    return [{ type: 'NotificationsChosen', data: { account_id, object_id, object_kind, member_id, email, ...command.choice, via, by, chosen_at: at } }];
  }
  if (state.slack_url === command.url) return [];
  const { account_id, object_id, object_kind, url, by, at } = command;
  return [{ type: 'SlackNotificationsSet', data: { account_id, object_id, object_kind, url, by, set_at: at } }];
}

export const notificationSettings: Aggregate<NotificationState, NotificationEvent, NotificationCommand> = {
  streamId: (objectId) => `notifications-${objectId}`,
  initial: () => ({ members: new Map(), slack_url: null }),
  evolve,
  decide,
};
