import type { Test } from 'tap';
import { openAccount } from '../../src/accounts/commands.js';
import type { Plan, Scope } from '../../src/accounts/plans.js';
import { buildApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/infra/ids.js';
import type { Services, ServiceOptions } from '../../src/services.js';
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

/** The HTTP API over fresh embedded stores, with a live projection runner, as `npm start` serves it. */
export async function testApp(t: Test, options: ServiceOptions & { dataDir?: string; env?: Record<string, string> } = {}): Promise<{ app: App; services: Services }> {
  const services = await testServices(t, options);
  await services.start();
  const app = await buildApp(services);
  t.teardown(() => app.close());
  // Every error any test provokes must be one its route's OpenAPI entry names.
  t.teardown(() => {
    const undocumented = services.metrics.render().split('\n').filter((line) => line.startsWith('feedback_undocumented_errors_total'));
    if (undocumented.length > 0) throw new Error(`error codes missing from the OpenAPI document: ${undocumented.join('; ')}`);
  });
  return { app, services };
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
