import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { keyedHash } from '../infra/keys.js';
import type { App } from './instance.js';

/** A caller's id is logged only when it cannot forge a log line or carry a payload. */
export const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Levels at which the `info` lines are not written. */
const QUIETER_THAN_INFO = new Set(['warn', 'error', 'fatal', 'silent']);

const errorCodes = new WeakMap<FastifyReply, string>();

/** Paths whose query is a credential as a whole: a login link's `?t=` signs in whoever holds it, until it is used. */
const SIGN_IN_PATHS = /^\/dashboard\/login(?:\/|$)/;
/** Query parameters named as credentials, on any path: their values are not logged. */
const CREDENTIAL_PARAM = /^(?:t|_?token|.*(?:token|key|secret|password|signature|session|auth).*|sig|code)$/i;
/** Credentials of this service, wherever in a URL someone put them: an API key, a login link's token. */
const CREDENTIALS = [/svc_[0-9A-Za-z]{43}/g, /lnk_[0-9A-Za-z]{26}\.[^/?&#\s]*/g];
const REDACTED = '[redacted]';

/**
 * A request's URL as the log may hold it: the query of a sign-in route
 * dropped whole, the value of any query parameter named as a credential
 * dropped, and an API key or login token found anywhere replaced, so that
 * whoever reads the logs cannot sign in or call the API with what they read.
 */
export function loggedUrl(url: string): string {
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  let query = mark === -1 ? undefined : url.slice(mark + 1);
  if (query !== undefined) {
    query = SIGN_IN_PATHS.test(path)
      ? REDACTED
      : query
          .split('&')
          .map((pair) => {
            const equals = pair.indexOf('=');
            if (equals === -1) return pair;
            let name = pair.slice(0, equals);
            try {
              name = decodeURIComponent(name.replace(/\+/g, ' '));
            } catch {
              // A malformed escape: the name as sent is what is judged.
            }
            return CREDENTIAL_PARAM.test(name) ? `${pair.slice(0, equals)}=${REDACTED}` : pair;
          })
          .join('&');
  }
  let logged = query === undefined ? path : `${path}?${query}`;
  for (const credential of CREDENTIALS) logged = logged.replace(credential, REDACTED);
  return logged;
}

/** The request fields of a log line (the `req` serializer's, and the request log's own). */
export const requestFields = (request: { method?: string; url?: string; host?: string }) => ({
  method: request.method,
  url: request.url === undefined ? undefined : loggedUrl(request.url),
  host: request.host,
});

/**
 * The two lines fastify writes per request, with what an operator needs and
 * nothing that identifies a visitor or signs anyone in: the client address
 * only as the keyed hash the events carry (D10), the URL without credentials
 * (loggedUrl), and the error code of every 4xx/5xx reply on
 * the completion line so that refusals can be told apart.
 */
export class RequestLog extends LogController {
  constructor(private readonly hashKey: Buffer) {
    super();
  }

  override incomingRequest(request: FastifyRequest): void {
    // The address's hash is worked out only for a line that is written.
    if (this.isLogDisabled(request) || QUIETER_THAN_INFO.has(request.log.level)) return;
    request.log.info({ req: requestFields(request), ip_hash: keyedHash(this.hashKey, request.ip) }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const code = errorCodes.get(reply);
    const fields = { res: reply, responseTime: reply.elapsedTime, ...(code ? { code } : {}) };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}

/** Notes the `code` of every error reply (D3), whoever sent it, for the completion line. */
export function rememberErrorCodes(app: App): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string' || payload.length > 64 * 1024) return payload;
    try {
      const code = (JSON.parse(payload) as { code?: unknown }).code;
      if (typeof code === 'string') errorCodes.set(reply, code);
    } catch {
      // Not a JSON body: the status alone says what happened.
    }
    return payload;
  });
}
