import { accountsProjection } from './accounts.js';
import type { Projection } from './projection.js';

export const projections: Projection[] = [accountsProjection];
