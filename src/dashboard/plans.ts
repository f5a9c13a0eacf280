import type { Plan } from '../accounts/plans.js';
import { PLAN_RATES } from '../http/rate-limits.js';

/** Spec 5.2 and D4: who may create widgets in the dashboard (forms and polls: every plan). */
export const WIDGET_PLANS: readonly Plan[] = ['pro', 'business'];
/** D4: the API is Business's. */
export const API_PLANS: readonly Plan[] = ['business'];

const ALL_PLANS = ['submitted_at', 'browser', 'browser_version', 'device', 'os', 'ip_hash', 'language', 'completion_time_ms'];
const PRO = ['screen_width', 'screen_height', 'fingerprint_hash', 'referer', 'referer_domain'];
const BUSINESS = ['country', 'region', 'city', 'timezone', 'utm_source', 'utm_medium', 'utm_campaign', 'is_proxy'];

/** Spec 2.7 (metadata), 5.7 (security measures), 8 (rates): what a plan gets, as the dashboard shows it. */
export function planLimits(plan: Plan) {
  return {
    api_access: API_PLANS.includes(plan),
    create_widgets: WIDGET_PLANS.includes(plan),
    rate_limit_per_minute: PLAN_RATES[plan],
    metadata_fields: [...ALL_PLANS, ...(plan === 'free' ? [] : PRO), ...(plan === 'business' ? BUSINESS : [])],
    honeypot: plan !== 'free',
    per_ip_rate_limit: plan !== 'free',
  };
}
