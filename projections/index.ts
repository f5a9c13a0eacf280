import { accountsProjection } from './accounts.js';
import { dashboardSessionsProjection } from './dashboard-sessions.js';
import { formsProjection } from './forms.js';
import { pollsProjection } from './polls.js';
import type { Projection } from './projection.js';
import { responsesProjection } from './responses.js';
import { webhookReplaysProjection, webhooksProjection } from './webhooks.js';
import { widgetsProjection } from './widgets.js';

export const projections: Projection[] = [accountsProjection, widgetsProjection, formsProjection, pollsProjection, responsesProjection, webhooksProjection, webhookReplaysProjection, dashboardSessionsProjection];
