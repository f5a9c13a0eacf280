import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { ACCOUNTS } from '../projections/accounts.js';
import { projections } from '../projections/index.js';
import { ProjectionRunner } from '../src/kernel/feed/runner.js';
import { catalog } from '../src/domain-events.js';
import type { JsonObject, StoredEvent } from '../src/infra/event-store/port.js';
import { silent, testServices } from './support/services.js';

/**
 * Events are stored for ever, so every version of every event type that was
 * ever written keeps a fixture here: `<type>.v<version>.json`, the event as
 * the store holds it. Whatever the code becomes, it must read all of them.
 */
const DIR = new URL('./fixtures/events/', import.meta.url);

interface Fixture {
  file: string;
  type: string;
  stream: string;
  data: JsonObject;
  metadata: JsonObject & { schema_version: number; occurred_at: string };
}

const fixtures: Fixture[] = readdirSync(DIR)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({ file, ...JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) }));

const stored = (fixture: Fixture, position: bigint): StoredEvent => ({
  id: `fixture-${position}`,
  streamId: fixture.stream,
  revision: 0n,
  position,
  type: fixture.type,
  data: fixture.data,
  metadata: fixture.metadata,
  recordedAt: fixture.metadata.occurred_at,
});

t.test('every version of every event type has a fixture, and every fixture is of one', async (t) => {
  const expected = catalog.versions().map(({ type, version }) => `${type}.v${version}.json`).sort();
  t.ok(expected.length >= 24, `${expected.length} (type, version) pairs`);
  t.same(fixtures.map((f) => f.file), expected);
  for (const fixture of fixtures) t.equal(`${fixture.type}.v${fixture.metadata.schema_version}.json`, fixture.file, `${fixture.file} holds what its name says`);
});

t.test('the catalog reads every fixture, and every projection takes it', async (t) => {
  fixtures.forEach((fixture, i) => {
    const event = catalog.parse(stored(fixture, BigInt(i + 1)));
    t.ok(event, `${fixture.file} is read`);
    if (!event) return;
    for (const projection of projections) t.doesNotThrow(() => projection.project(event), `${fixture.file} through ${projection.name}`);
  });
});

t.test('the fixtures, stored in the order they occurred, reach every read model', async (t) => {
  const services = await testServices(t);
  const story = [...fixtures].sort((a, b) => a.metadata.occurred_at.localeCompare(b.metadata.occurred_at));
  for (const fixture of story) await services.events.append(fixture.stream, [{ type: fixture.type, data: fixture.data, metadata: fixture.metadata }], 'any');
  const runner = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent);
  await runner.init();
  t.equal(await runner.catchUp(), fixtures.length, 'every one applied');
  t.equal(runner.halted, undefined, 'none stopped the projections');
  t.equal(runner.position, await services.events.headPosition());
  const account = fixtures.find((f) => f.type === 'AccountOpened')!.data.account_id as string;
  t.match(await services.readModels.get(ACCOUNTS, account), { plan: 'business' }, 'the account and its plan change are there');
});

const grown = (f: Fixture) => (f.type.endsWith('Updated') ? (f.data.changes as JsonObject).settings : f.data.settings) as JsonObject;

t.test('settings stored before rate limits came in read as they always did: no rate limit, no honeypot, duplicates allowed', async (t) => {
  for (const type of ['WidgetCreated', 'WidgetUpdated', 'FormCreated', 'FormUpdated', 'PollCreated', 'PollUpdated']) {
    const old = fixtures.find((f) => f.file === `${type}.v1.json`)!;
    t.notOk('honeypot' in grown(old), `${type} version 1 as first stored`);
    const event = catalog.parse(stored(old, 1n))!;
    t.same(grown({ ...old, data: event.data as JsonObject }), { ...grown(old), rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null, ...(type.startsWith('Widget') ? {} : { indexable: false }), ...(type.startsWith('Form') ? { keep_partial: false } : {}) }, type);
  }
});

t.test('settings stored before the network limit was a setting keep their duplicate guard, and have no network limit', async (t) => {
  for (const [type, version] of [['WidgetCreated', 3], ['WidgetUpdated', 3], ['FormCreated', 3], ['FormUpdated', 3], ['PollCreated', 2], ['PollUpdated', 2]] as const) {
    const old = fixtures.find((f) => f.file === `${type}.v${version}.json`)!;
    const event = catalog.parse(stored(old, 1n))!;
    const before = grown(old);
    if (before === undefined) {
      t.equal(grown({ ...old, data: event.data as JsonObject }), undefined, `${type} v${version}: changes without settings stay without`);
      continue;
    }
    t.same(grown({ ...old, data: event.data as JsonObject }), { ...before, network_limit_per_hour: null, ...(type.startsWith('Widget') ? {} : { indexable: false }), ...(type.startsWith('Form') ? { keep_partial: false } : {}) }, `${type} v${version}: prevent_duplicates as stored, no network limit`);
  }
  const guarded = fixtures.find((f) => f.file === 'WidgetCreated.v3.json')!;
  t.equal(grown(guarded).prevent_duplicates, true, 'a guarded widget among them');
});

t.test('forms and polls stored before hosted pages keep their pages out of search engines', async (t) => {
  for (const file of ['FormCreated.v3.json', 'PollCreated.v2.json', 'PollUpdated.v1.json']) {
    const old = fixtures.find((f) => f.file === file)!;
    const settings = grown({ ...old, data: catalog.parse(stored(old, 1n))!.data as JsonObject });
    if (old.type.endsWith('Updated') && !settings) continue;
    t.equal(settings.indexable, false, file);
  }
  const form = fixtures.find((f) => f.file === 'FormCreated.v5.json')!;
  t.equal(grown({ ...form, data: catalog.parse(stored(form, 1n))!.data as JsonObject }).indexable, true, 'a version 5 form keeps what it says');
});

t.test('a version 1 event written after settings grew keeps the settings it carries', async (t) => {
  for (const type of ['WidgetCreated', 'WidgetUpdated', 'FormCreated', 'FormUpdated', 'PollCreated', 'PollUpdated']) {
    const current = fixtures.find((f) => f.file === `${type}.v2.json`)!;
    const asVersion1 = { ...current, metadata: { ...current.metadata, schema_version: 1 } };
    t.same(catalog.parse(stored(asVersion1, 1n))!.data, catalog.parse(stored(current, 1n))!.data, type);
  }
});

t.test('widgets and forms stored before hidden fields and redirects read as having none', async (t) => {
  for (const type of ['WidgetCreated', 'FormCreated']) {
    const old = fixtures.find((f) => f.file === `${type}.v3.json`)!;
    const event = catalog.parse(stored(old, 1n))!;
    t.match(event.data, { hidden_fields: [], redirect_url: null, questions: old.data.questions }, type);
  }
});

t.test('forms and widgets stored before pages read as one page, no rules, no endings; forms a page at a time and no partial responses', async (t) => {
  for (const type of ['WidgetCreated', 'FormCreated']) {
    const old = fixtures.find((f) => f.file === `${type}.v${type === 'FormCreated' ? 6 : 5}.json`)!;
    const event = catalog.parse(stored(old, 1n))!;
    t.match(event.data, { pages: [], logic: [], endings: [], questions: old.data.questions }, type);
    if (type === 'FormCreated') t.match(event.data, { presentation: 'all', settings: { ...grown(old), keep_partial: false } }, 'the form');
  }
  const changed = fixtures.find((f) => f.file === 'FormUpdated.v6.json')!;
  const settings = grown(changed);
  const event = catalog.parse(stored(changed, 1n))!;
  t.same(grown({ ...changed, data: event.data as JsonObject }), settings === undefined ? undefined : { ...settings, keep_partial: false }, 'changed settings keep no partial responses');
  const widgetChange = fixtures.find((f) => f.file === 'WidgetUpdated.v5.json')!;
  t.same(catalog.parse(stored(widgetChange, 1n))!.data, widgetChange.data, 'a widget change reads as it was');
});

t.test('responses stored before endings ended on the default ending', async (t) => {
  const old = fixtures.find((f) => f.file === 'ResponseSubmitted.v2.json')!;
  t.equal((catalog.parse(stored(old, 1n))!.data as { ending?: unknown }).ending, null);
  const current = fixtures.find((f) => f.file === 'ResponseSubmitted.v3.json')!;
  t.equal((catalog.parse(stored(current, 1n))!.data as { ending?: unknown }).ending, 'fans');
});
