import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import { z } from 'zod';
import { catalog, definitions } from '../src/domain-events.js';
import { EventMetadata } from '../src/kernel/event-catalog.js';
import { exactShape } from '../src/kernel/exact-shape.js';
import type { StoredEvent } from '../src/infra/event-store/port.js';
import { fixture } from './support/fixtures.js';

/**
 * The check lets a reader keep stored data instead of zod's copy of it. It
 * must never say yes where zod would refuse the value or hand back another:
 * each event's current fixture is changed in every way below, and every
 * value the check takes is parsed by zod, which must take it and give back
 * an equal value.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const REPLACEMENTS: Json[] = ['text', '', 0, 1, -3, 1.5, 2 ** 60, true, false, null, {}, [], ['text'], { zz: 1 }];

/** The value changed in one place: each field removed, an unknown one added, each value replaced, each list emptied or grown. */
function* variants(value: Json): Generator<Json> {
  for (const replacement of REPLACEMENTS) yield replacement;
  if (Array.isArray(value)) {
    yield [];
    if (value.length > 0) yield [...value, value[0]!];
    for (let i = 0; i < value.length; i++) for (const changed of variants(value[i]!)) yield value.map((item, j) => (j === i ? changed : item));
  } else if (value !== null && typeof value === 'object') {
    yield { ...value, zz_unknown: 1 };
    for (const key of Object.keys(value)) {
      const { [key]: _removed, ...without } = value;
      yield without;
      for (const changed of variants(value[key]!)) yield { ...value, [key]: changed };
    }
  }
}

function differential(t: { fail(message: string): void }, name: string, schema: z.ZodType, sample: Json): { taken: number; refused: number } {
  const check = exactShape(schema);
  if (!check) return { taken: 0, refused: 0 };
  let taken = 0;
  let refused = 0;
  for (const value of [sample, ...variants(sample)]) {
    if (!check(value)) {
      refused++;
      continue;
    }
    taken++;
    const parsed = schema.safeParse(value);
    if (!parsed.success || !isDeepStrictEqual(parsed.data, value)) {
      t.fail(`${name}: the check took ${JSON.stringify(value)}, which zod ${parsed.success ? 'hands back changed' : 'refuses'}`);
      return { taken, refused };
    }
  }
  return { taken, refused };
}

t.test('for every event of the service, what the check takes, zod takes and hands back unchanged', async (t) => {
  const unchecked: string[] = [];
  for (const definition of definitions) {
    const sample = fixture(definition.type, definition.version).data as Json;
    const { taken, refused } = differential(t, definition.type, definition.schema, sample);
    if (taken + refused === 0) {
      unchecked.push(definition.type);
      continue;
    }
    t.ok(taken > 0 && refused > 0, `${definition.type}: some changed values are taken (${taken}) and some refused (${refused})`);
  }
  const metadata = fixture('ResponseSubmitted', 1).metadata as Json;
  const { taken, refused } = differential(t, 'EventMetadata', EventMetadata, metadata);
  t.ok(taken > 0 && refused > 0, `metadata: taken ${taken}, refused ${refused}`);
  // These hold what JSON Schema does not state as zod checks it (unions of question objects, records of
  // translations, patterns), so zod decides them. They are written when an object changes, not read by the thousand.
  t.strictSame(unchecked.sort(), ['ApiKeyIssued', 'FormCreated', 'FormUpdated', 'PollCreated', 'PollUpdated', 'WidgetCreated', 'WidgetUpdated'], 'every other event type has a check');
});

t.test('the events a rebuild reads most have a check, and take their stored data as it is', async (t) => {
  for (const type of ['ResponseSubmitted', 'VoteCast', 'LogSealed']) {
    const definition = definitions.find((d) => d.type === type)!;
    const stored = fixture(type, definition.version);
    t.equal(exactShape(definition.schema)?.(stored.data), true, type);
    const event: StoredEvent = { id: 'e', streamId: stored.stream, revision: 0n, position: 1n, type, data: stored.data, metadata: stored.metadata, recordedAt: stored.metadata.occurred_at, dataText: JSON.stringify(stored.data) };
    const recorded = catalog.parse(event)!;
    t.equal(recorded.data, stored.data, `${type}: the reading is the stored data itself, not a copy`);
    t.equal(recorded.dataText, event.dataText, `${type}: and its text is kept`);
  }
});

t.test('schemas whose JSON Schema does not say all zod checks get no check', async (t) => {
  const cases: Array<[string, z.ZodType]> = [
    ['a refinement', z.object({ a: z.string().refine((s) => s !== 'x') })],
    ['a transform', z.object({ a: z.string().transform((s) => s.length) })],
    ['a trim', z.object({ a: z.string().trim() })],
    ['a pattern', z.object({ a: z.string().regex(/^a+$/) })],
    ['a format', z.object({ a: z.string().email() })],
    ['a union of objects', z.object({ a: z.union([z.object({ b: z.string() }), z.object({ b: z.string(), c: z.string() })]) })],
    ['any value', z.object({ a: z.unknown() })],
    ['a record', z.object({ a: z.record(z.string(), z.string()) })],
  ];
  for (const [name, schema] of cases) t.equal(exactShape(schema), undefined, name);
});

t.test('a value zod would change is not of the shape', async (t) => {
  const check = exactShape(z.object({ n: z.number().int(), d: z.number().int().default(1), o: z.object({ s: z.string() }), strict: z.strictObject({ s: z.string() }) }))!;
  const value = { n: 1, d: 2, o: { s: 'x' }, strict: { s: 'y' } };
  t.equal(check(value), true, 'every field present, none unknown');
  t.equal(check({ ...value, d: undefined }), false, 'a default zod would fill');
  t.equal(check({ ...value, o: { s: 'x', extra: 1 } }), false, 'a field zod would drop');
  t.equal(check({ ...value, n: 2 ** 60 }), false, 'a whole number past the safe range');
  t.equal(check({ ...value, n: 1.5 }), false, 'not a whole number');
});
