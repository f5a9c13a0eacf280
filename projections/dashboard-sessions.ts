import type { DomainEvent } from '../src/domain-events.js';
import type { Projection } from '../src/kernel/feed/projection.js';

export const DASHBOARD_SESSIONS = 'dashboard_sessions';

/**
 * Dashboard sessions by id (the keyed hash of the cookie's secret), so any
 * instance finds the session a cookie names. Their activity is not an event;
 * it is kept beside, in the collection of SessionActivity.
 */
export const dashboardSessionsProjection: Projection<DomainEvent> = {
  name: 'dashboard_sessions',
  version: 1,
  collections: [{ name: DASHBOARD_SESSIONS, indexes: [['account_id']] }],
  project(event) {
    switch (event.type) {
      case 'DashboardSignedIn': {
        const { session_id, account_id, link_id, signed_in_at } = event.data;
        return [{ op: 'put', collection: DASHBOARD_SESSIONS, doc: { id: session_id, account_id, link_id, signed_in_at, signed_out_at: null, end_reason: null } }];
      }
      case 'DashboardSignedOut':
        return [
          { op: 'patch', collection: DASHBOARD_SESSIONS, where: { id: event.data.session_id }, set: { signed_out_at: event.data.signed_out_at, end_reason: event.data.reason } },
        ];
      default:
        return [];
    }
  },
};
