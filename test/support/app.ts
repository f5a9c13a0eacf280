import type { Test } from 'tap';
import { openAccount } from '../../src/accounts/commands.js';
import type { Plan, Scope } from '../../src/accounts/plans.js';
import { buildApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/infra/ids.js';
import type { Services, ServiceOptions } from '../../src/services.js';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { testServices } from './services.js';

export const ALL_SCOPES: Scope[] = ['forms:read', 'forms:write', 'responses:read', 'responses:write'];

/** A clock the test moves by hand. */
export function manualClock(start = '2026-11-22T10:00:00.000Z'): Clock & { advance(ms: number): void; set(iso: string): void } {
  let now = Date.parse(start);
  const clock = () => new Date(now);
  return Object.assign(clock, {
    advance: (ms: number) => void (now += ms),
    set: (iso: string) => void (now = Date.parse(iso)),
  });
}

export interface Owner {
  accountId: string;
  keyId: string;
  key: string;
  headers: { authorization: string };
}

export async function owner(services: Services, plan: Plan = 'business', scopes: Scope[] = ALL_SCOPES): Promise<Owner> {
  const opened = await openAccount(services, { name: `${plan} owner`, plan, scopes });
  return { accountId: opened.account_id, keyId: opened.key_id, key: opened.api_key, headers: { authorization: `Bearer ${opened.api_key}` } };
}

export type TestAppOptions = ServiceOptions & { dataDir?: string; env?: Record<string, string> };

/**
 * The HTTP API over fresh embedded stores, with a live projection runner, as
 * `npm start` serves it; `before` runs on the services before they start
 * (given.ts records a history there).
 */
export async function testApp(t: Test, { before, ...options }: TestAppOptions & { before?: (services: Services) => Promise<void> } = {}): Promise<{ app: App; services: Services }> {
  const errors = options.logger === undefined ? errorLog() : undefined;
  const services = await testServices(t, errors ? { ...options, logger: errors.logger } : options);
  await before?.(services);
  await services.start();
  const app = await buildApp(services);
  t.teardown(() => app.close());
  if (errors) {
    // An error-level line is for a failure of the service, which its caller sees as a 5xx:
    // a request that logs one and answers anything else hides a defect (or cries wolf).
    const statuses = new Map<string, number>();
    app.addHook('onResponse', async (request, reply) => void statuses.set(request.id, reply.statusCode));
    t.teardown(() => {
      const unanswered = errors.lines.filter((line) => typeof line.reqId === 'string' && !((statuses.get(line.reqId) ?? 0) >= 500));
      if (unanswered.length > 0) {
        const shown = unanswered.map((line) => `${String(line.reqId)} (${statuses.get(String(line.reqId)) ?? 'no reply'}): ${String(line.msg)} ${JSON.stringify(line.err ?? '')}`);
        throw new Error(`requests logged at error level without a 5xx: ${shown.join('; ')}`);
      }
    });
  }
  // Every error any test provokes must be one its route's OpenAPI entry names.
  t.teardown(() => {
    const undocumented = services.metrics.render().split('\n').filter((line) => line.startsWith('feedback_undocumented_errors_total'));
    if (undocumented.length > 0) throw new Error(`error codes missing from the OpenAPI document: ${undocumented.join('; ')}`);
  });
  return { app, services };
}

/** A logger that keeps its error-level lines (and writes nothing). */
export function errorLog(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'error' }, sink), lines };
}

/** Creates a published widget of the owner and answers its id. */
export async function publishedWidget(app: App, who: Owner, body: Record<string, unknown> = {}): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/widgets', headers: who.headers, payload: { widget_type: 'feedback', title: 'Rate us', ...body } });
  if (created.statusCode !== 201) throw new Error(`widget not created: ${created.body}`);
  const id = created.json().id as string;
  const published = await app.inject({ method: 'PUT', url: `/api/widgets/${id}`, headers: who.headers, payload: { published: true } });
  if (published.statusCode !== 200) throw new Error(`widget not published: ${published.body}`);
  return id;
}

export async function tokenFor(app: App, kind: 'widgets' | 'forms' | 'polls', id: string): Promise<string> {
  const reply = await app.inject({ method: 'GET', url: `/api/${kind}/${id}/token` });
  if (reply.statusCode !== 200) throw new Error(`no token: ${reply.body}`);
  return reply.json().token as string;
}
