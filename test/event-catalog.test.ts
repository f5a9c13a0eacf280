import t from 'tap';
import { z } from 'zod';
import { defineEvent, EventCatalog, UnreadableEvent, type EventOf } from '../src/kernel/event-catalog.js';
import type { JsonObject, StoredEvent } from '../src/infra/event-store/port.js';

/**
 * A catalog of its own, to show the mechanism on an event with a history:
 * version 1 had `name`; version 2 split it into `first` and `last`; version 3
 * added `tags` (empty for everyone before).
 */
const PersonNamed = defineEvent('PersonNamed', z.object({ first: z.string(), last: z.string(), tags: z.array(z.string()) }), {
  version: 3,
  upcasters: {
    1: (data) => {
      const [first = '', ...rest] = String(data.name).split(' ');
      return { first, last: rest.join(' ') };
    },
    2: (data) => ({ ...data, tags: [] }),
  },
});
const Noted = defineEvent('Noted', z.object({ text: z.string() }));
const catalog = new EventCatalog<EventOf<typeof PersonNamed> | EventOf<typeof Noted>>([PersonNamed, Noted]);

const meta = { occurred_at: '2026-11-22T10:00:00.000Z', actor: 'cli' };

function stored(type: string, data: JsonObject, metadata: JsonObject): StoredEvent {
  return { id: 'e1', streamId: 'person-1', revision: 0n, position: 7n, type, data, metadata, recordedAt: '2026-11-22T10:00:00.001Z' };
}

/** What the catalog says of an event it cannot read, or 'readable'. */
function refusal(event: StoredEvent): UnreadableEvent | 'readable' {
  try {
    catalog.parse(event);
    return 'readable';
  } catch (error) {
    if (!(error instanceof UnreadableEvent)) throw error;
    return error;
  }
}

t.test('given a version 1 event, parse upcasts it through version 2 to version 3', async (t) => {
  const parsed = catalog.parse(stored('PersonNamed', { name: 'Ada King Lovelace' }, { ...meta, schema_version: 1 }));
  t.same(parsed?.data, { first: 'Ada', last: 'King Lovelace', tags: [] });
  t.equal(parsed?.metadata.schema_version, 1, 'the metadata still says what was stored');
});

t.test('given a version 2 event, only the step from 2 to 3 runs', async (t) => {
  t.same(catalog.parse(stored('PersonNamed', { first: 'Grace', last: 'Hopper' }, { ...meta, schema_version: 2 }))?.data, { first: 'Grace', last: 'Hopper', tags: [] });
});

t.test('an event stored before versions were recorded is version 1', async (t) => {
  t.same(catalog.parse(stored('PersonNamed', { name: 'Alan Turing' }, meta))?.data, { first: 'Alan', last: 'Turing', tags: [] });
  t.same(catalog.parse(stored('Noted', { text: 'hello' }, meta))?.data, { text: 'hello' });
});

t.test('the current version is read as stored', async (t) => {
  t.same(catalog.parse(stored('PersonNamed', { first: 'Edsger', last: 'Dijkstra', tags: ['go-to'] }, { ...meta, schema_version: 3 }))?.data, { first: 'Edsger', last: 'Dijkstra', tags: ['go-to'] });
});

t.test('serialize writes the current version', async (t) => {
  const written = catalog.serialize({ type: 'PersonNamed', data: { first: 'Barbara', last: 'Liskov', tags: [] } }, meta);
  t.same(written.metadata, { schema_version: 3, ...meta });
  t.same(written.data, { first: 'Barbara', last: 'Liskov', tags: [] });
});

t.test('serialize refuses a field the current version does not have, instead of dropping it', async (t) => {
  const data = { first: 'Barbara', last: 'Liskov', tags: [], middle: 'Jane' } as unknown as EventOf<typeof PersonNamed>['data'];
  t.throws(() => catalog.serialize({ type: 'PersonNamed', data }, meta), /no field middle/);
});

t.test('what it cannot read, it says so, naming the event and the reason', async (t) => {
  t.match(refusal(stored('PersonNamed', { first: 'A', last: 'B', tags: [] }, { ...meta, schema_version: 4 })), {
    position: 7n,
    streamId: 'person-1',
    type: 'PersonNamed',
    reason: /version 4.*up to 3/,
  }, 'a version newer than the code');
  t.match(refusal(stored('PersonNamed', { first: 'A', tags: [] }, { ...meta, schema_version: 3 })), { reason: /^its data does not fit version 3: last:/ }, 'a required field missing');
  t.match(refusal(stored('Noted', { text: 'x' }, { actor: 'cli' })), { type: 'Noted', reason: /^its metadata does not fit: occurred_at:/ }, 'metadata missing a field');
  t.match(refusal(stored('Noted', { text: 'x' }, { ...meta, schema_version: 0 })), { reason: /^its metadata does not fit: schema_version:/ }, 'a version that is none');
  const throwing = defineEvent('Broken', z.object({ n: z.number() }), { version: 2, upcasters: { 1: () => { throw new Error('no n to be had'); } } });
  t.throws(() => new EventCatalog([throwing]).parse(stored('Broken', {}, meta)), { name: 'UnreadableEvent', reason: /from version 1 failed: no n to be had/ }, 'an upcaster that fails');
});

t.test("the store's own types are not its business; a type of a newer version is unreadable, never passed over", async (t) => {
  t.equal(catalog.parse(stored('$metadata', {}, {})), undefined);
  t.throws(() => catalog.parse(stored('PersonMoved', { to: 'x' }, meta)), { name: 'UnreadableEvent', reason: 'its type PersonMoved is not one this version of the service knows' });
});

t.test('a version needs an upcaster from each older one', async (t) => {
  t.throws(() => defineEvent('Gap', z.object({}), { version: 3, upcasters: { 1: (d) => d } }), /needs one upcaster from each older version \(1, 2\)/);
  t.throws(() => defineEvent('Extra', z.object({}), { version: 1, upcasters: { 1: (d) => d } }), /needs one upcaster/);
  t.throws(() => defineEvent('Zero', z.object({}), { version: 0, upcasters: {} }), /whole number/);
});

t.test('versions lists every version a stored event may have', async (t) => {
  t.same(catalog.versions(), [
    { type: 'PersonNamed', version: 1 },
    { type: 'PersonNamed', version: 2 },
    { type: 'PersonNamed', version: 3 },
    { type: 'Noted', version: 1 },
  ]);
});

t.test('serialize names an unknown field deep inside the data by its whole path', async (t) => {
  const Listed = defineEvent('Listed', z.object({ items: z.array(z.object({ name: z.string(), size: z.object({ w: z.number() }) })) }));
  const lists = new EventCatalog<EventOf<typeof Listed>>([Listed]);
  const data = { items: [{ name: 'a', size: { w: 1 } }, { name: 'b', size: { w: 2, h: 3 } }] } as unknown as EventOf<typeof Listed>['data'];
  t.throws(() => lists.serialize({ type: 'Listed', data }, meta), /has no field items\.1\.size\.h:/);
  t.doesNotThrow(() => lists.serialize({ type: 'Listed', data: { items: [{ name: 'a', size: { w: 1 } }] } }, meta), 'known fields pass');
});

t.test('given a frozen stored event (one object handed to several readers), every reader gets the one reading', async (t) => {
  const shared = Object.freeze(stored('PersonNamed', { first: 'Ada', last: 'Lovelace', tags: [] }, { ...meta, schema_version: 3 }));
  const first = catalog.parse(shared);
  t.equal(catalog.parse(shared), first, 'read once');
  const own = stored('PersonNamed', { first: 'Ada', last: 'Lovelace', tags: [] }, { ...meta, schema_version: 3 });
  t.not(catalog.parse(own), catalog.parse(own), 'an event not frozen is read at every parse');
  t.same(catalog.parse(own), first, 'to the same reading');
});

t.test('an event that reads back as stored comes with the text it was stored as', async (t) => {
  const data = { first: 'Edsger', last: 'Dijkstra', tags: ['go-to'] };
  const text = JSON.stringify(data);
  t.equal(catalog.parse({ ...stored('PersonNamed', JSON.parse(text), { ...meta, schema_version: 3 }), dataText: text })?.dataText, text);
  t.equal(catalog.parse(stored('PersonNamed', data, { ...meta, schema_version: 3 }))?.dataText, undefined, 'none where the store gave none');
});

t.test('no stored text comes with data that is not the text read back: upcast, a field dropped or added, a value changed', async (t) => {
  const withText = (type: string, data: JsonObject, version: number) => ({ ...stored(type, data, { ...meta, schema_version: version }), dataText: JSON.stringify(data) });
  t.equal(catalog.parse(withText('PersonNamed', { first: 'Grace', last: 'Hopper' }, 2))?.dataText, undefined, 'upcast from version 2');
  t.equal(catalog.parse(withText('PersonNamed', { first: 'Grace', last: 'Hopper', tags: [], middle: 'B' }, 3))?.dataText, undefined, 'a field the schema drops');
  const Listed = defineEvent('Listed', z.object({ items: z.array(z.object({ name: z.string() })), size: z.number().default(1), label: z.string().transform((s) => s.trim()) }));
  const lists = new EventCatalog<EventOf<typeof Listed>>([Listed]);
  t.equal(lists.parse(withText('Listed', { items: [{ name: 'a' }], size: 2, label: 'x' }, 1))?.dataText, JSON.stringify({ items: [{ name: 'a' }], size: 2, label: 'x' }), 'the same, field by field, deep down');
  t.equal(lists.parse(withText('Listed', { items: [{ name: 'a', h: 3 }], size: 2, label: 'x' }, 1))?.dataText, undefined, 'a field dropped deep inside');
  t.equal(lists.parse(withText('Listed', { items: [], label: 'x' }, 1))?.dataText, undefined, 'a field a default adds');
  t.equal(lists.parse(withText('Listed', { items: [], size: 2, label: ' x ' }, 1))?.dataText, undefined, 'a value a transform changes');
});
