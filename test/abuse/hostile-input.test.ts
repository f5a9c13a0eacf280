/**
 * Every endpoint against malformed, mistyped, oversized, deeply nested,
 * unicode-edged and operator-shaped input, bad and foreign ids, and bad
 * tokens. Each request must be refused with a 4xx in the D3 shape, never a
 * 5xx, and leave every stored event and read model as it was.
 */
import { createHmac } from 'node:crypto';
import fc from '../support/properties.js';
import type { InjectOptions } from 'fastify';
import t, { type Test } from 'tap';
import type { App } from '../../src/app.js';
import { issueEmbedToken } from '../../src/embeddables/access.js';
import { createKey } from '../../src/accounts/commands.js';
import { ALL_SCOPES, manualClock, owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { snapshotReadModels } from '../support/services.js';

const RUNS = 40;

/** Values no schema of the API accepts where an object of known keys is expected. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    { $ne: null },
    { $gt: '' },
    { $where: 'sleep(1000)' },
    { __proto__: { admin: true } },
    '\ud800',
    '\udfff\u0000\u202e',
    'x'.repeat(20_000),
    Array.from({ length: 5000 }, (_, i) => i),
    Number.MAX_SAFE_INTEGER,
    -0,
    1e308,
    '',
  ),
);

/** An object body that always carries a key no endpoint knows, with hostile values elsewhere too. */
const hostileObject = fc
  .dictionary(fc.oneof(fc.string(), fc.constantFrom('title', 'questions', 'published', 'settings', 'options', 'ids', 'answers', 'constructor', '$set')), hostileValue, { maxKeys: 6 })
  .map((dict) => ({ ...dict, unknown_field_for_this_api: true }));

function parses(raw: string): boolean {
  try {
    JSON.parse(raw);
    return true;
  } catch {
    return false;
  }
}

/**
 * Raw bodies: malformed JSON, deep nesting, prototype keys, non-objects. An
 * opened brace is completed now and then by chance (`{}` is a valid, empty
 * update), so those are drawn again.
 */
const rawBody = fc.oneof(
  fc.string().map((s) => `{${s}`).filter((raw) => !parses(raw)),
  fc.constantFrom(
    '{"a":',
    '[]',
    'null',
    '"text"',
    '12',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '['.repeat(50_000) + ']'.repeat(50_000),
    `{"answers":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
    '\u0000',
  ),
);

const badId = fc.oneof(
  fc.string({ minLength: 1, maxLength: 80 }),
  fc.constantFrom('..%2F..%2Fetc%2Fpasswd', '%00', '%24ne', 'wgt_' + 'x'.repeat(300), '%F0%9F%92%A9', 'frm_does_not_exist', 'pol_missing', '%7B%22%24gt%22%3A%22%22%7D'),
);

/**
 * Ids containing `%` go into the path raw, so malformed percent-encoding is
 * tried too; `?`, `#` and `/` are always escaped, or the request would name
 * another route (`/api/widgets/?x` is the widget list) rather than a bad id.
 */
function inPath(id: string): string {
  return id.includes('%') ? id.replace(/[?#/]/g, encodeURIComponent) : encodeURIComponent(id);
}

/**
 * The injector resolves dot segments as a browser would (`/api/forms/.` and
 * `/api/forms/%2E` are the form list, `/api/forms/`), so an id that is one
 * names another route rather than being a bad id: fewer segments, or an
 * empty one where the id stood.
 */
function namesTheRoute(template: string, url: string): boolean {
  const segments = (path: string) => path.split('/').slice(1);
  const resolved = segments(new URL(url, 'http://localhost').pathname);
  return resolved.length === segments(template).length && resolved.every((segment) => segment !== '');
}

interface World {
  app: App;
  alice: Owner;
  mallory: Owner;
  widget: string;
  form: string;
  poll: string;
  option: string;
  tokens: { widget: string; form: string; poll: string };
}

async function world(t: Test, options: { rateWindowMs?: number } = {}): Promise<World & { clock: ReturnType<typeof manualClock> }> {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock, ...options });
  const alice = await owner(services);
  const mallory = await owner(services);
  const widget = await publishedWidget(app, alice);
  const formReply = await app.inject({ method: 'POST', url: '/api/forms', headers: alice.headers, payload: { title: 'Form', questions: [{ id: 'q', type: 'short_text', title: 'Q', required: true }] } });
  const form = formReply.json().id;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: alice.headers, payload: { published: true } });
  const pollReply = await app.inject({ method: 'POST', url: '/api/polls', headers: alice.headers, payload: { question: 'Q?', options: [{ text: 'A' }, { text: 'B' }] } });
  const poll = pollReply.json().id;
  await app.inject({ method: 'PUT', url: `/api/polls/${poll}`, headers: alice.headers, payload: { published: true } });
  // Some stored data for the hostile requests to try to reach.
  const tokens = { widget: await tokenFor(app, 'widgets', widget), form: await tokenFor(app, 'forms', form), poll: await tokenFor(app, 'polls', poll) };
  await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5 }, _token: tokens.widget } });
  await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { q: 'hello' }, _token: tokens.form } });
  await app.inject({ method: 'POST', url: `/api/polls/${poll}/vote`, payload: { option_ids: [pollReply.json().options[0].id], _token: tokens.poll, metadata: { fingerprint: 'first' } } });
  return { app, clock, alice, mallory, widget, form, poll, option: pollReply.json().options[0].id, tokens, ...{ services } } as never;
}

function assertRefused(t: Test, request: InjectOptions, reply: Awaited<ReturnType<App['inject']>>): void {
  const ok = reply.statusCode >= 400 && reply.statusCode < 500;
  if (!ok) t.fail(`${request.method} ${request.url} answered ${reply.statusCode}: ${reply.body.slice(0, 300)}`);
  const body = reply.json();
  if (typeof body.code !== 'string' || body.statusCode !== reply.statusCode || typeof body.error !== 'string' || typeof body.message !== 'string') {
    t.fail(`${request.method} ${request.url}: not the D3 shape: ${reply.body.slice(0, 300)}`);
  }
  if (/node_modules|\bat \w+ \(|sqlite|FST_ERR|stack/i.test(reply.body)) t.fail(`${request.method} ${request.url} leaked internals: ${reply.body.slice(0, 300)}`);
}

/** A token as the service signs one, with any text for its issue time. */
const signedAt = (key: Buffer, kind: string, id: string, issued: string) => {
  const payload = `v1.${kind}.${id}.${issued}`;
  return `${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}`;
};

t.test('hostile input is refused everywhere and changes nothing', async (t) => {
  // Every request of a key counts against its account's rate (1000 a minute), invalid ones too, and the
  // write routes below take 840 of alice's: windows of a second, so the rate never answers in place of a check.
  const w = (await world(t, { rateWindowMs: 1000 })) as World & { services: import('../../src/services.js').Services; clock: ReturnType<typeof manualClock> };
  const { app, alice, mallory } = w;
  // A key of alice's own for each write route below.
  const writeKeys = new Map<string, Record<string, string>>();
  for (const url of ['/api/widgets', '/api/forms', '/api/polls', `/api/widgets/${w.widget}`, `/api/forms/${w.form}`, `/api/polls/${w.poll}`, '/api/responses']) {
    const { api_key } = await createKey(w.services, { accountId: alice.accountId, name: url, scopes: ALL_SCOPES });
    writeKeys.set(url, { authorization: `Bearer ${api_key}` });
  }
  const before = { events: (await w.services.events.readAll({ after: 0n, limit: 100_000 })).length, models: await snapshotReadModels(w.services) };
  let sent = 0;
  let limited = 0;
  const send = async (request: InjectOptions) => {
    sent++;
    // Many addresses, so the plan rates do not answer in place of the checks under test.
    const reply = await app.inject({ remoteAddress: `10.${sent >> 16 & 255}.${(sent >> 8) & 255}.${sent & 255}`, ...request });
    if (reply.statusCode === 429) limited++;
    assertRefused(t, request, reply);
  };
  const json = { 'content-type': 'application/json' };

  // Management bodies: hostile objects and raw bodies on every write, with a key that may write.
  const writes = [
    ['POST', '/api/widgets'],
    ['POST', '/api/forms'],
    ['POST', '/api/polls'],
    ['PUT', `/api/widgets/${w.widget}`],
    ['PUT', `/api/forms/${w.form}`],
    ['PUT', `/api/polls/${w.poll}`],
    ['DELETE', '/api/responses'],
  ] as const;
  for (const [method, url] of writes) {
    const key = writeKeys.get(url)!;
    await fc.assert(fc.asyncProperty(hostileObject, async (body) => send({ method, url, headers: key, payload: body as object })), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(rawBody, async (raw) => send({ method, url, headers: { ...key, ...json }, payload: raw })), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(hostileValue.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)), async (v) => send({ method, url, headers: { ...key, ...json }, payload: JSON.stringify(v) ?? 'null' })), { numRuns: RUNS });
  }

  // Public submissions: valid tokens with hostile answers (always one unknown question), and hostile tokens.
  const submissions = [
    ['widget', `/api/widgets/${w.widget}/submit`, w.tokens.widget],
    ['form', `/api/forms/${w.form}/submit`, w.tokens.form],
  ] as const;
  for (const [, url, token] of submissions) {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 70 }), hostileValue, { maxKeys: 5 }), fc.option(hostileObject), async (answers, metadata) =>
        send({ method: 'POST', url, payload: { answers: { ...answers, zz_not_a_question: 'x' }, _token: token, ...(metadata ? { metadata } : {}) } }),
      ),
      { numRuns: RUNS },
    );
    await fc.assert(fc.asyncProperty(rawBody, async (raw) => send({ method: 'POST', url, headers: json, payload: raw })), { numRuns: RUNS });
  }
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.string(), fc.constant(w.option)), { maxLength: 30 }), async (ids) =>
      send({ method: 'POST', url: `/api/polls/${w.poll}/vote`, payload: { option_ids: [...ids, 'not-an-option'], _token: w.tokens.poll, metadata: { fingerprint: `f${sent}` } } }),
    ),
    { numRuns: RUNS },
  );

  // Tokens: forged, foreign, for another object, and expired, with otherwise valid submissions.
  const foreignKey = Buffer.alloc(32, 7);
  const valid = { widget: { answers: { rating: 5 } }, form: { answers: { q: 'hi' } }, poll: { option_ids: [w.option] } };
  const targets = [
    ['widget', `/api/widgets/${w.widget}/submit`, w.widget],
    ['form', `/api/forms/${w.form}/submit`, w.form],
    ['poll', `/api/polls/${w.poll}/vote`, w.poll],
  ] as const;
  for (const [kind, url, id] of targets) {
    const badTokens = [
      undefined,
      '',
      issueEmbedToken(foreignKey, kind, id, w.clock()),
      issueEmbedToken(foreignKey, kind, id, w.clock()).replace(/.$/, 'A'),
      kind === 'widget' ? w.tokens.form : w.tokens.widget,
      w.tokens[kind].replace(id, 'wgt_other'),
      `${w.tokens[kind]}.extra`,
      // Signed with the service's own key, with issue times no date can hold.
      signedAt(w.services.keys.embedTokens, kind, id, (8_640_000_000_000_001).toString(36)),
      signedAt(w.services.keys.embedTokens, kind, id, (-8_640_000_000_000_001).toString(36)),
    ];
    for (const token of badTokens) await send({ method: 'POST', url, payload: { ...valid[kind], _token: token, metadata: { fingerprint: `t${sent}` } } });
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 600 }), async (token) => send({ method: 'POST', url, payload: { ...valid[kind], _token: token, metadata: { fingerprint: `r${sent}` } } })), { numRuns: RUNS });
  }
  w.clock.advance(1800 * 1000 + 1);
  for (const [kind, url] of targets) await send({ method: 'POST', url, payload: { ...valid[kind], _token: w.tokens[kind], metadata: { fingerprint: `e${sent}` } } });

  // Bad ids on every route that takes one, with and without a key.
  const idRoutes = [
    ['GET', '/api/widgets/:id'], ['PUT', '/api/widgets/:id'], ['DELETE', '/api/widgets/:id'], ['GET', '/api/widgets/:id/token'], ['POST', '/api/widgets/:id/submit'], ['GET', '/api/widgets/:id/responses'],
    ['GET', '/api/forms/:id'], ['PUT', '/api/forms/:id'], ['DELETE', '/api/forms/:id'], ['GET', '/api/forms/:id/token'], ['POST', '/api/forms/:id/submit'], ['GET', '/api/forms/:id/responses'],
    ['GET', '/api/polls/:id'], ['PUT', '/api/polls/:id'], ['DELETE', '/api/polls/:id'], ['GET', '/api/polls/:id/token'], ['POST', '/api/polls/:id/vote'], ['GET', '/api/polls/:id/results'],
  ] as const;
  for (const [method, template] of idRoutes) {
    await fc.assert(
      fc.asyncProperty(badId, fc.boolean(), async (id, withKey) => {
        const url = template.replace(':id', inPath(id));
        fc.pre(namesTheRoute(template, url));
        await send({
          method,
          url,
          ...(withKey ? { headers: alice.headers } : {}),
          ...(method === 'PUT' || method === 'POST' ? { payload: {} } : {}),
        });
      }),
      { numRuns: 15 },
    );
  }

  // Queries, credentials and content types.
  // Every spelling that is no whole number, for both parameters; a page past any number is refused too. A limit
  // past any number is not there: it is served as 100 (D9), as test/widgets/management.test.ts shows.
  const notWhole = ['0', '-1', '1e3', '0x10', '1.0', '%00', '', ' 1', '1 '];
  for (const url of ['/api/widgets', '/api/forms', '/api/polls', `/api/widgets/${w.widget}/responses`, `/api/forms/${w.form}/responses`]) {
    for (const [name, value] of [...notWhole.flatMap((v) => [['page', v], ['limit', v]]), ['page', '99999999999999999999']]) {
      await send({ method: 'GET', url: `${url}?${name}=${encodeURIComponent(value!)}`, headers: alice.headers });
    }
    await fc.assert(
      fc.asyncProperty(fc.string().map((s) => `x${s}`), fc.constantFrom('page', 'limit'), async (value, name) =>
        send({ method: 'GET', url: `${url}?${name}=${encodeURIComponent(value)}`, headers: alice.headers }),
      ),
      { numRuns: 15 },
    );
  }
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 300 }), async (credential) => send({ method: 'GET', url: '/api/widgets', headers: { authorization: `Bearer ${credential.replace(/[\r\n]/g, '')}` } })),
    { numRuns: RUNS },
  );
  for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
    await send({ method: 'POST', url: '/api/widgets', headers: { ...alice.headers, 'content-type': type }, payload: '{"widget_type":"nps","title":"x"}' });
    await send({ method: 'POST', url: `/api/widgets/${w.widget}/submit`, headers: { 'content-type': type }, payload: 'answers=1' });
  }
  await send({ method: 'POST', url: `/api/widgets/${w.widget}/submit`, headers: json, payload: `{"answers":{"comment":"${'x'.repeat(1024 * 1024)}"}}` });

  // Another owner's objects, through every key route.
  for (const [method, url, payload] of [
    ['PUT', `/api/widgets/${w.widget}`, { title: 'taken' }],
    ['DELETE', `/api/widgets/${w.widget}`, undefined],
    ['PUT', `/api/forms/${w.form}`, { title: 'taken' }],
    ['DELETE', `/api/forms/${w.form}`, undefined],
    ['PUT', `/api/polls/${w.poll}`, { question: 'taken?' }],
    ['DELETE', `/api/polls/${w.poll}`, undefined],
    ['GET', `/api/widgets/${w.widget}/responses`, undefined],
    ['GET', `/api/forms/${w.form}/responses`, undefined],
    ['DELETE', '/api/responses', { ids: ['rsp_x'], widgetId: w.widget }],
  ] as const) {
    await send({ method, url, headers: mallory.headers, ...(payload ? { payload } : {}) });
  }

  t.ok(sent > 1500, `${sent} hostile requests sent`);
  t.equal(limited, 0, 'none was answered by a rate limit in place of the check under test');
  t.equal((await w.services.events.readAll({ after: 0n, limit: 100_000 })).length, before.events, 'no event was appended');
  t.same(await snapshotReadModels(w.services), before.models, 'no read model changed');
});
