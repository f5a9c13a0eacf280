/**
 * The one error type of the service. Its code decides the HTTP status (in
 * STATUS, the only place that mapping lives) and the CLI's message.
 */
export const STATUS = {
  validation_error: 400,
  unauthorized: 401,
  session_required: 401,
  login_link_invalid: 401,
  login_link_expired: 401,
  login_link_used: 401,
  invitation_invalid: 401,
  invitation_expired: 401,
  invitation_used: 401,
  unsubscribe_link_invalid: 401,
  forbidden: 403,
  csrf_rejected: 403,
  plan_required: 403,
  insufficient_scope: 403,
  invalid_token: 403,
  domain_not_allowed: 403,
  widget_not_published: 403,
  widget_closed: 403,
  form_not_published: 403,
  form_closed: 403,
  poll_not_published: 403,
  poll_closed: 403,
  partial_responses_off: 403,
  not_found: 404,
  account_not_found: 404,
  key_not_found: 404,
  widget_not_found: 404,
  form_not_found: 404,
  poll_not_found: 404,
  request_timeout: 408,
  webhook_not_found: 404,
  member_not_found: 404,
  conflict: 409,
  account_exists: 409,
  member_exists: 409,
  last_owner: 409,
  signed_in_to_other_account: 409,
  key_limit_reached: 409,
  duplicate_submission: 409,
  replay_pending: 409,
  payload_too_large: 413,
  read_only: 405,
  precondition_failed: 412,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  rate_limited: 429,
  replay_quota_exceeded: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  event_unreadable: 500,
  not_ready: 503,
  store_unavailable: 503,
  storage_full: 507,
} as const;

export type ErrorCode = keyof typeof STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** What went wrong inside, for the logs of a 5xx; never sent to a client. */
    options?: { cause: unknown },
  ) {
    // A refusal (4xx) is an answer, not a fault: no log shows its stack, and capturing one took
    // about 6 µs of every refusal, a flood's 429s among them. A 5xx keeps its stack for the logs.
    const limit = Error.stackTraceLimit;
    if (STATUS[code] < 500) Error.stackTraceLimit = 0;
    try {
      super(message, options);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'AppError';
  }

  get statusCode(): number {
    return STATUS[this.code];
  }
}

/** A configuration that fails its schema inside a decision: 400 with one detail per issue. */
export function invalidBody(error: { issues: Array<{ path: PropertyKey[]; message: string }> }, message: string): AppError {
  const details = error.issues.map((issue) => ({ path: ['body', ...issue.path.map(String)].join('.'), message: issue.message }));
  return new AppError('validation_error', message, details);
}
