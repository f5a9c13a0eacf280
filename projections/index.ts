import type { DomainEvent } from '../src/domain-events.js';
import { accountsProjection } from './accounts.js';
import { analyticsProjection } from './analytics.js';
import { dashboardSessionsProjection } from './dashboard-sessions.js';
import { formsProjection } from './forms.js';
import { membersProjection } from './members.js';
import { notificationsProjection } from './notifications.js';
import { pollsProjection } from './polls.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { responsesProjection } from './responses.js';
import { webhookReplaysProjection, webhooksProjection } from './webhooks.js';
import { widgetsProjection } from './widgets.js';

export const projections: Projection<DomainEvent>[] = [accountsProjection, widgetsProjection, formsProjection, pollsProjection, responsesProjection, webhooksProjection, webhookReplaysProjection, dashboardSessionsProjection, analyticsProjection, membersProjection, notificationsProjection];

/** The catalog that reads the events these projections take. */
export { catalog, personalData } from '../src/domain-events.js';

/** This module, for a rebuild's worker thread to import (it holds `projections` and `catalog`). */
export const readSide = new URL(import.meta.url);
