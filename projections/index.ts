import { accountsProjection } from './accounts.js';
import type { Projection } from './projection.js';
import { responsesProjection } from './responses.js';
import { widgetsProjection } from './widgets.js';

export const projections: Projection[] = [accountsProjection, widgetsProjection, responsesProjection];
