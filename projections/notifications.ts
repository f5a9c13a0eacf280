import type { DomainEvent } from '../src/domain-events.js';
import type { Doc } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';

export const NOTIFICATION_CHOICES = 'notification_choices';
export const NOTIFICATION_SLACK = 'notification_slack';

/** A member's notification choice for one object (`<object id>:<member id>`); a member without one has the default. */
export interface NotificationChoiceDoc extends Doc {
  account_id: string;
  object_id: string;
  member_id: string;
  mode: 'each' | 'digest' | 'none';
  digest_hour: number;
  time_zone: string;
  include_answers: boolean;
  chosen_at: string;
}

/** An object's Slack incoming-webhook address (by object id); none when it does not notify Slack. */
export interface NotificationSlackDoc extends Doc {
  account_id: string;
  url: string;
  set_at: string;
}

export const notificationsProjection: Projection<DomainEvent> = {
  name: 'notifications',
  version: 1,
  collections: [
    { name: NOTIFICATION_CHOICES, indexes: [['member_id']] },
    { name: NOTIFICATION_SLACK, indexes: [] },
  ],
  project(event) {
    switch (event.type) {
      case 'NotificationsChosen': {
        const { account_id, object_id, member_id, mode, digest_hour, time_zone, include_answers, chosen_at } = event.data;
        const doc: NotificationChoiceDoc = { id: `${object_id}:${member_id}`, account_id, object_id, member_id, mode, digest_hour, time_zone, include_answers, chosen_at };
        return [{ op: 'put', collection: NOTIFICATION_CHOICES, doc }];
      }
      case 'SlackNotificationsSet': {
        const { account_id, object_id, url, set_at } = event.data;
        if (url === null) return [{ op: 'delete', collection: NOTIFICATION_SLACK, where: { id: object_id } }];
        const doc: NotificationSlackDoc = { id: object_id, account_id, url, set_at };
        return [{ op: 'put', collection: NOTIFICATION_SLACK, doc }];
      }
      case 'MemberRemoved':
        return [{ op: 'delete', collection: NOTIFICATION_CHOICES, where: { member_id: event.data.member_id } }];
      default:
        return [];
    }
  },
};
