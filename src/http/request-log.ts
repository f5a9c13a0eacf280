import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { keyedHash } from '../infra/keys.js';
import type { App } from './instance.js';

/** A caller's id is logged only when it cannot forge a log line or carry a payload. */
export const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Levels at which the `info` lines are not written. */
const QUIETER_THAN_INFO = new Set(['warn', 'error', 'fatal', 'silent']);

const errorCodes = new WeakMap<FastifyReply, string>();

/**
 * The two lines fastify writes per request, with what an operator needs and
 * nothing that identifies a visitor: the client address only as the keyed
 * hash the events carry (D10), and the error code of every 4xx/5xx reply on
 * the completion line so that refusals can be told apart.
 */
export class RequestLog extends LogController {
  constructor(private readonly hashKey: Buffer) {
    super();
  }

  override incomingRequest(request: FastifyRequest): void {
    // The address's hash is worked out only for a line that is written.
    if (this.isLogDisabled(request) || QUIETER_THAN_INFO.has(request.log.level)) return;
    request.log.info({ req: request, ip_hash: keyedHash(this.hashKey, request.ip) }, 'incoming request');
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
