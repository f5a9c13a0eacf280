import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { RequestPayload } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { ownerPlan } from '../accounts/plans.js';
import { EMBEDDABLES, recentSummary } from '../embeddables/queries.js';
import { ParamsOf } from '../embeddables/kinds.js';
import { clientAddressOf, rateLimitedAddress } from '../http/client-address.js';
import type { App } from '../http/instance.js';
import { headerCount } from '../http/raw-headers.js';
import { EVERY_REPLY } from '../http/reply-headers.js';
import type { Context } from '../kernel/context.js';
import { cleanJsonText } from '../kernel/text.js';
import { gateOnSummary } from '../embeddables/access.js';

/** What a signal's route does once its request is known good: count it (crawlers not), as the route itself does. */
export type CountVisit = (
  kind: keyof typeof EMBEDDABLES,
  summary: NonNullable<Awaited<ReturnType<typeof recentSummary>>>,
  plan: Awaited<ReturnType<typeof ownerPlan>>,
  body: SignalBodyValue,
  visitor: { headers: IncomingMessage['headers']; ip: string },
) => Promise<void>;

export interface SignalBodyValue {
  _token?: string | undefined;
  type: 'display' | 'start';
  session: string;
  metadata: { pageUrl?: string | undefined; referrer?: string | undefined };
}

/** The path of a signal, exactly as the embed sends it: anything else is the router's. */
const SIGNAL_PATH = /^\/api\/(widgets|forms|polls)\/([A-Za-z0-9_]{1,64})\/events$/;
const KIND_OF_PATH = { widgets: 'widget', forms: 'form', polls: 'poll' } as const;
/** The body types fastify's JSON parser takes, as the embed writes them. */
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);
/** A signal is a few hundred bytes: a longer body goes the router's way, under its limits. */
const MAX_BODY_BYTES = 4096;

/** The headers of every counted 204, as the route's hooks set them. */
const COUNTED: OutgoingHttpHeaders = {
  ...Object.fromEntries(Object.entries(EVERY_REPLY).map(([name, value]) => [name.toLowerCase(), value])),
  'cross-origin-resource-policy': 'cross-origin',
  'access-control-allow-origin': '*',
};

/** Bodies read on the fast path and then handed to the router: the route reads them again from here. */
const replayed = new WeakMap<IncomingMessage, Buffer>();

/**
 * The route's preParsing hook: a body the fast path read is given to the
 * parser as if it came from the socket.
 */
export function replayBody(request: { raw: IncomingMessage }, _reply: unknown, payload: RequestPayload, done: (error: null, payload: RequestPayload) => void): void {
  const body = replayed.get(request.raw);
  done(null, body === undefined ? payload : Readable.from([body]));
}

/**
 * Displays and starts come with every page view, so the well-formed one is
 * answered in front of fastify's router: its request-wide hooks, request
 * log and per-request objects cost several times the count itself. It
 * answers only what it can tell is a counted 204, with the headers the
 * route sends; every other request (another path, an unusual header, a body
 * that is not plainly valid, an unknown or closed object, a refused token or
 * site, a rate limit reached, any failure) goes to the router unchanged, the
 * body it has read replayed, and gets the route's own answer. Nothing is
 * counted twice: the rate limit is taken only on a 204 here, and a limit
 * already reached stays reached when the route takes it again.
 */
export function answerSignalsFirst(app: App, services: Context, bodySchema: z.ZodType, countVisit: CountVisit): void {
  const router = app.server.listeners('request')[0] as ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  if (router === undefined) return;
  const clientAddress = clientAddressOf(services.config.TRUST_PROXY);
  // The validators fastify compiles for the route, so a body passes here exactly when it passes there.
  const validBody = validatorCompiler({ schema: bodySchema, method: 'POST', url: '', httpPart: 'body' }) as (value: unknown) => { value?: unknown; error?: unknown };
  const validParams = Object.fromEntries(
    Object.entries(ParamsOf).map(([kind, schema]) => [kind, validatorCompiler({ schema, method: 'POST', url: '', httpPart: 'params' }) as (value: unknown) => { error?: unknown }]),
  );
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  /** A request the fast path may answer, judged on its line and headers: the kind and id, or null. */
  const signalOf = (request: IncomingMessage): [kind: keyof typeof EMBEDDABLES, id: string] | null => {
    if (closing || request.method !== 'POST' || request.httpVersion !== '1.1') return null;
    const path = SIGNAL_PATH.exec(request.url ?? '');
    if (path === null) return null;
    const { headers } = request;
    const type = headers['content-type'];
    if (type === undefined || !JSON_TYPES.has(type.toLowerCase())) return null;
    if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined || headers.expect !== undefined) return null;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= MAX_BODY_BYTES)) return null;
    if (headerCount(request.rawHeaders, 'host') !== 1 || headerCount(request.rawHeaders, 'content-type') !== 1) return null;
    return [KIND_OF_PATH[path[1] as keyof typeof KIND_OF_PATH], path[2]!];
  };

  /** Counts the signal and answers 204, or answers false for the router to. */
  const answered = async (request: IncomingMessage, response: ServerResponse, kind: keyof typeof EMBEDDABLES, id: string, bytes: Buffer): Promise<boolean> => {
    if (bytes.length !== Number(request.headers['content-length'])) return false;
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch {
      return false;
    }
    // No escape or control character (so no string needs a look of its own), and no key the parser refuses.
    if (!cleanJsonText(text) || text.includes('__proto__') || text.includes('constructor')) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return false;
    }
    const checked = validBody(parsed);
    if (checked.error !== undefined || validParams[kind]!({ id }).error !== undefined) return false;
    const body = checked.value as SignalBodyValue;
    const summary = await recentSummary(services, EMBEDDABLES[kind], id);
    if (!summary) return false;
    const now = services.clock();
    try {
      gateOnSummary(services, kind, summary, { token: body._token, headers: request.headers }, now);
    } catch {
      return false;
    }
    const ip = clientAddress(request);
    if (ip === undefined) return false;
    const plan = await ownerPlan(services, summary.account_id);
    const limited = await app.limits.count(app.limits.plan(`visitor:${summary.account_id}:${rateLimitedAddress(ip)}`, plan));
    if (limited === null) return false;
    await countVisit(kind, summary, plan, body, { headers: request.headers, ip });
    response.writeHead(204, { 'x-request-id': services.ids('req'), ...limited, ...COUNTED });
    response.end();
    return true;
  };

  app.server.removeListener('request', router);
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const signal = signalOf(request);
    if (signal === null) return router(request, response);
    // Node reads exactly Content-Length bytes, which signalOf bounded.
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      answered(request, response, signal[0], signal[1], bytes).then(
        (done) => {
          if (done) return;
          replayed.set(request, bytes);
          router(request, response);
        },
        () => {
          // A store that failed: the route tries again and answers (and logs) its failure.
          if (response.headersSent) return;
          replayed.set(request, bytes);
          router(request, response);
        },
      );
    });
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
