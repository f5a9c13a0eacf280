import type { RouteOptions } from 'fastify';
import { z } from 'zod';
import { STATUS, type ErrorCode } from '../kernel/errors.js';
import { needsKey } from './auth.js';
import { ErrorBody, errorBody } from './error-body.js';
import { BODY_TOO_LARGE } from './body-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The codes of the route's own checks (not found, not published, ...); the generic ones are added from its shape. */
    errors?: readonly ErrorCode[];
    /** Every code the route is documented to answer, filled in when it is registered. */
    documentedErrors?: ReadonlySet<ErrorCode>;
  }
}


/** A message each code typically carries, for the document's examples. */
const EXAMPLE: Record<ErrorCode, string> = {
  validation_error: 'The request body is invalid',
  unauthorized: 'Missing or invalid API key: send `Authorization: Bearer svc_…`',
  forbidden: 'Forbidden',
  session_required: 'Sign in to the dashboard: ask for a new login link',
  login_link_invalid: 'This login link is not valid',
  login_link_expired: 'This login link has expired; ask for a new one',
  login_link_used: 'This login link has been used already; ask for a new one',
  invitation_invalid: 'This invitation is not valid: ask for a new one',
  invitation_expired: 'This invitation has expired: ask for a new one',
  invitation_used: 'This invitation has been accepted already: sign in instead',
  unsubscribe_link_invalid: 'This unsubscribe link is not valid',
  member_not_found: 'no such member in this account',
  member_exists: 'someone@example.com is a member of this account already',
  last_owner: 'An account keeps at least one owner: make another member owner first',
  csrf_rejected: 'This request did not come from the dashboard',
  plan_required: 'This endpoint needs the business plan; the account is on pro',
  insufficient_scope: 'This endpoint needs the forms:write scope',
  invalid_token: 'The embed token is missing, invalid or expired; fetch a new one',
  domain_not_allowed: 'This widget may not be embedded on example.org',
  widget_not_published: 'This widget is not published',
  widget_closed: 'This widget is closed',
  form_not_published: 'This form is not published',
  form_closed: 'This form is closed',
  poll_not_published: 'This poll is not published',
  poll_closed: 'This poll is closed',
  partial_responses_off: 'This form does not keep partial responses (settings.keep_partial is off)',
  not_found: 'No route GET /api/nothing',
  account_not_found: 'no such account',
  key_not_found: 'no such key',
  widget_not_found: 'Widget not found',
  form_not_found: 'Form not found',
  poll_not_found: 'Poll not found',
  request_timeout: 'The request was not received in time',
  webhook_not_found: 'Webhook not found',
  conflict: 'The object kept changing while this request ran; send it again',
  account_exists: 'account exists already',
  signed_in_to_other_account: 'This browser is signed in to another account: choose on the sign-in page whether to switch',
  key_limit_reached: 'The account has 50 active API keys, the most it may hold: revoke one to create another',
  duplicate_submission: 'This visitor has voted in this poll already',
  replay_pending: 'A replay of this webhook is queued or running; ask again once it has finished',
  payload_too_large: BODY_TOO_LARGE,
  read_only: 'This store shows the history as of 2026-11-01T00:00:00.000Z and is read-only',
  precondition_failed: 'Precondition Failed',
  unsupported_media_type: 'The request body must be JSON in UTF-8',
  range_not_satisfiable: 'Range Not Satisfiable',
  request_header_fields_too_large: 'The request line or headers are larger than the server takes',
  rate_limited: 'Rate limit exceeded: 1000 requests per 60 s; retry in 12 s',
  replay_quota_exceeded: 'This account has asked for 10 replays in the last 24 hours, the most it may; the next one is possible from 2026-11-02T09:30:00.000Z',
  internal_error: 'Something went wrong on our side; the request id identifies it in our logs',
  event_unreadable: 'A stored event of this object cannot be read by this version of the service',
  not_ready: 'The service is not ready',
  store_unavailable: 'The service could not reach its storage in time. Retry in a few seconds',
  storage_full: 'The service has no storage space left; nothing of this request was stored. Retry later',
};

/** Routes that take a key (always or optionally): the checks of requireKey, in its order. */
const KEY: ErrorCode[] = ['unauthorized', 'plan_required', 'insufficient_scope'];
/** Routes whose method carries a body: fastify's refusals before the schema runs, and a store with no room for what they write. */
const BODY: ErrorCode[] = ['payload_too_large', 'unsupported_media_type', 'storage_full'];

const takesKey = (route: RouteOptions) => Boolean(route.config?.optionalKey) || needsKey(route);

/**
 * The codes a route can answer: a URL the router cannot read, the key (on a
 * K endpoint before anything else of the request), a bad path, query or
 * body, the route's own checks, its rate, our own failure, and a store out
 * of reach for now.
 */
export function errorCodesOf(route: RouteOptions): ErrorCode[] {
  const hasBody = [route.method].flat().some((method) => method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE');
  return [
    ...new Set<ErrorCode>([
      'validation_error',
      ...(hasBody ? BODY : []),
      ...(takesKey(route) ? KEY : []),
      ...(route.config?.errors ?? []),
      'rate_limited',
      'internal_error',
      'store_unavailable',
    ]),
  ];
}

/** One reply schema per status, naming exactly the codes the route answers with it. */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, z.ZodType> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(STATUS[code], [...(byStatus.get(STATUS[code]) ?? []), code]);
  const responses: Record<number, z.ZodType> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = ErrorBody.extend({ statusCode: z.literal(status), code: z.enum(list as [ErrorCode, ...ErrorCode[]]) }).meta({
      description: list.map((code) => `\`${code}\``).join(', '),
      examples: list.map((code) => errorBody(code, EXAMPLE[code])),
    });
  }
  return responses;
}

/**
 * Gives every documented route its error replies in the OpenAPI document,
 * and remembers them so the error handler can tell a code the document does
 * not name (logged and counted; the reply still goes out).
 */
export function documentErrors(route: RouteOptions): void {
  const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
  if (!schema || schema.hide) return;
  const codes = errorCodesOf(route);
  route.schema = { ...schema, response: { ...schema.response, ...errorResponses(codes) } };
  route.config = { ...route.config, documentedErrors: new Set(codes) };
}
