/**
 * The personal-data codec over the embedded store: what a declared event
 * stores, how it reads back, and what an erased key leaves.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createDecipheriv } from 'node:crypto';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { catalog, personalData } from '../../src/domain-events.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { KEYS_FILE, type SubjectKeyStore } from '../../src/infra/subject-keys/port.js';
import { openSqliteSubjectKeys } from '../../src/infra/subject-keys/sqlite.js';
import { openSubjectKeysAt } from '../../src/infra/subject-keys/open.js';
import { KEY_FRESH_MS, personal, PersonalCodec, SEALED, SealedUnreadable, SECRET_CHECK, sealedOf, WrongSecret } from '../../src/kernel/personal.js';
import { PersonalEventStore } from '../../src/kernel/personal-store.js';
import { ResponseSubmitted } from '../../src/submissions/events.js';
import { VoteCast } from '../../src/polls/events.js';
import { responseEvent, SECRET } from '../support/sealed.js';
import { tempDir } from '../support/services.js';
import { eventStoreContract } from '../contracts/event-store.js';

const meta = { occurred_at: '2026-11-22T10:00:00.000Z', actor: 'public' };

const response = (id: string, text: string) =>
  responseEvent(id, text, {
    pageUrl: `https://x.example/${text}`,
    extra: { consent_record: { consent_given: true, timestamp: 't', ip_hash: 'h', user_agent: 'ua', consent_text: 'I agree', form_version: 1 } },
  });

function open(t: Test, dir = tempDir(t)) {
  const store = new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, openSqliteSubjectKeys(dir), SECRET));
  t.teardown(() => store.close());
  return { store, dir };
}

t.test('a declared event is stored sealed, reads back as written, and other events are left as they are', async (t) => {
  const { store, dir } = open(t);
  const event = response('r1', 'SECRET-TEXT-1');
  await store.append('response-r1', [event], 'no_stream');
  await store.append('other', [catalog.serialize({ type: 'SubmissionGuarded', data: { target: 'widget', target_id: 'wid_1', response_id: 'r1' } }, meta)], 'no_stream');

  const [raw] = await store.readFeed({ limit: 10 });
  const stored = JSON.parse(raw!.data);
  t.same(Object.keys(stored), ['response_id', 'account_id', 'widget_id', SEALED, 'submitted_at'], 'its other fields plain, in their order; the sealed ones in one envelope where they stood');
  t.notOk(raw!.data.includes('SECRET-TEXT-1'), 'the stored text holds none of what was sent');
  t.equal(sealedOf(stored)?.key, 'r1', 'sealed under the response');

  const [read] = await store.readStream('response-r1');
  t.same(read!.data, event.data, 'read back, it is the event as written');
  t.same(Object.keys(read!.data), Object.keys(event.data), 'its fields in the order written');
  t.ok(read!.sealed, 'with the envelope it came from');
  const recorded = catalog.parse(read!);
  t.same(recorded?.data, event.data);
  t.equal((await store.readAll({ limit: 10 })).length, 2);
  t.equal((await store.readAccount('acc_1', { limit: 10 })).length, 1);
  await store.close();
  const bytes = Buffer.concat([readFileSync(join(dir, DATABASE_FILE)), existsSync(join(dir, `${DATABASE_FILE}-wal`)) ? readFileSync(join(dir, `${DATABASE_FILE}-wal`)) : Buffer.alloc(0)]);
  t.notOk(bytes.includes('SECRET-TEXT-1'), 'no file of the event store holds it');
});

t.test('an event stored before sealing reads as it always did', async (t) => {
  const dir = tempDir(t);
  const plain = openSqliteEventStore(dir);
  await plain.append('response-old', [response('old', 'OLD-TEXT')], 'no_stream');
  await plain.close();
  const { store } = open(t, dir);
  const [read] = await store.readStream('response-old');
  t.equal((read!.data.answers as { comment: string }).comment, 'OLD-TEXT');
  t.equal(read!.sealed, undefined);
});

t.test('an erased key makes its events unreadable anywhere: the stream and the feed read as if it were deleted', async (t) => {
  const { store, dir } = open(t);
  for (let i = 0; i < 5; i++) await store.append(`response-e${i}`, [response(`e${i}`, `TEXT-${i}`)], 'no_stream');
  await store.append('response-kept', [response('kept', 'KEPT')], 'no_stream');
  const keysBefore = readFileSync(join(dir, KEYS_FILE));
  await store.codec.forget(['e0', 'e1', 'e2', 'e3', 'e4']);
  t.same(await store.readStream('response-e0'), [], 'its stream reads empty');
  // A page of only erased events would tell a reader the feed ends there: the store reads on past them.
  const page = await store.readAll({ limit: 2 });
  t.same(page.map((e) => e.streamId), ['response-kept'], 'the feed skips them, past whole pages of them');
  t.same((await store.readAccount('acc_1', { limit: 2 })).map((e) => e.streamId), ['response-kept']);
  t.equal((await store.readFeed({ limit: 10 })).length, 6, 'the stored records stay, sealed, for the seals');
  const keysAfter = readFileSync(join(dir, KEYS_FILE));
  t.ok(keysAfter.length > 0 && keysBefore.length > 0);
  const stillThere = [...(await openSqliteSubjectKeys(dir, { readonly: true }).find(['e0', 'kept']))].map(([subject]) => subject);
  t.same(stillThere, ['kept'], 'the key file holds the kept key only');

  const sub = store.subscribe({ after: 0n, batchSize: 10 });
  for await (const batch of sub) {
    t.same(batch.map((e) => e.streamId), ['response-kept'], 'the live feed skips them too');
    break;
  }
  await sub.close();
});

t.test('read-model documents are opened as served; an erased one is left out', async (t) => {
  const { store } = open(t);
  await store.append('response-a', [response('a', 'A-TEXT')], 'no_stream');
  await store.append('response-b', [response('b', 'B-TEXT')], 'no_stream');
  const events = await store.readAll({ limit: 10 });
  const docs = events.map((e) => ({ id: e.data.response_id as string, [SEALED]: e.sealed }));
  docs.push({ id: 'plain', answers: { comment: 'as it is' } } as never);
  await store.codec.forget(['b']);
  const shown = await store.codec.reveal(docs as Array<Record<string, unknown>>);
  t.same(
    shown.map((d) => [d.id, (d.answers as { comment: string }).comment]),
    [
      ['a', 'A-TEXT'],
      ['plain', 'as it is'],
    ],
  );
  t.same(await store.codec.reveal([{ id: 'x' }]), [{ id: 'x' }], 'documents without an envelope are served as they are');
});

t.test('appends across streams seal each part, and a vote is sealed under its own key', async (t) => {
  const { store } = open(t);
  const vote = catalog.serialize({ type: 'VoteCast', data: { vote_id: 'v1', poll_id: 'p1', account_id: 'acc_1', option_ids: ['opt-SECRET'], cast_at: 't' } }, meta);
  await store.appendToStreams([
    { streamId: 'vote-v1', events: [vote], expected: 'no_stream' },
    { streamId: 'response-c', events: [response('c', 'C')], expected: 'no_stream' },
  ]);
  const raw = await store.readFeed({ limit: 10 });
  t.same(raw.map((r) => sealedOf(JSON.parse(r.data))?.key), ['v1', 'c']);
  t.notOk(raw[0]!.data.includes('opt-SECRET'));
  t.same((await store.readStream('vote-v1'))[0]!.data.option_ids, ['opt-SECRET']);
  t.equal(store.kind, 'sqlite');
  t.equal(store.atomicAcrossStreams, true);
  t.equal(await store.streamState('vote-v1'), 0n);
  t.equal(await store.headPosition(), 2n);
  t.equal(await store.endPosition(), 2n);
  t.equal(await store.hasRoom?.(), true);
  await store.deleteStreams(['vote-v1']);
  await store.expunge();
  t.same(await store.readStream('vote-v1'), []);
});

/** A key store that counts its writes: how many durable commits the embedded one would make. */
function counting(inner: SubjectKeyStore, fail?: Error) {
  const writes: number[] = [];
  const store: SubjectKeyStore = {
    ...inner,
    find: (subjects) => inner.find(subjects),
    erase: (subjects) => inner.erase(subjects),
    close: () => inner.close(),
    add: async (keys) => {
      writes.push(keys.size);
      if (fail) throw fail;
      return inner.add(keys);
    },
  };
  return { store, writes };
}

t.test('the submits of one turn store their keys in one write, each answered once it is done', async (t) => {
  const dir = tempDir(t);
  const { store: keys, writes } = counting(openSqliteSubjectKeys(dir));
  const store = new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, keys, SECRET));
  t.teardown(() => store.close());
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(`response-g${i}`, [response(`g${i}`, `G-${i}`)], 'no_stream')));
  t.same(writes, [20], 'twenty new keys, one write');
  for (let i = 0; i < 20; i++) t.equal(((await store.readStream(`response-g${i}`))[0]!.data.answers as { comment: string }).comment, `G-${i}`);
  // Two asking for the same subject in one turn: one key, which both seal under.
  await Promise.all([store.append('response-twice', [response('twice', 'ONE')], 'no_stream'), store.codec.seal([response('twice', 'TWO')])]);
  t.same(writes, [20, 1]);
  t.equal(((await store.readStream('response-twice'))[0]!.data.answers as { comment: string }).comment, 'ONE');
});

t.test('a key write that fails fails every submit of its turn, and none is appended', async (t) => {
  const dir = tempDir(t);
  const { store: keys } = counting(openSqliteSubjectKeys(dir), new Error('disk full'));
  const store = new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, keys, SECRET));
  t.teardown(() => store.close());
  const results = await Promise.allSettled([store.append('response-f1', [response('f1', 'F')], 'no_stream'), store.append('response-f2', [response('f2', 'F')], 'no_stream')]);
  t.same(results.map((r) => r.status), ['rejected', 'rejected']);
  t.same(await store.readFeed({ limit: 10 }), [], 'no event without its key');
});

t.test('the key store holds a salt, not the key: without SECRET it opens nothing, and an erasure elsewhere reaches a process that opened before', async (t) => {
  const dir = tempDir(t);
  const { store } = open(t, dir);
  await store.append('response-k', [response('k', 'K-TEXT')], 'no_stream');
  const [raw] = await store.readFeed({ limit: 1 });
  const sealed = sealedOf(JSON.parse(raw!.data))!;
  const salt = (await store.codec.keys.find(['k'])).get('k')!;
  t.equal(salt.length, 32);
  t.throws(() => {
    const decipher = createDecipheriv('aes-256-gcm', salt, Buffer.from(sealed.iv, 'base64'));
    const box = Buffer.from(sealed.box, 'base64');
    decipher.setAAD(Buffer.from('k'));
    decipher.setAuthTag(box.subarray(box.length - 16));
    decipher.update(box.subarray(0, box.length - 16));
    decipher.final();
  }, 'the salt does not open the content');
  const otherSecret = new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, openSqliteSubjectKeys(dir), `${SECRET}-other`));
  await t.rejects(otherSecret.readStream('response-k'), 'nor does the salt under another SECRET');
  await otherSecret.close();

  // A second process on the same files: it reads the response (deriving its key), then another erases it.
  let clock = 0;
  const second = new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, openSqliteSubjectKeys(dir), SECRET, { now: () => clock }));
  t.equal((await second.readStream('response-k')).length, 1);
  await store.codec.forget(['k']);
  clock += KEY_FRESH_MS;
  t.same(await second.readStream('response-k'), [], 'the key it derived before is not used once the salt is gone and its lookup is not fresh');
  await second.close();
});

t.test('a declaration names fields the event has, and keeps its subject readable', async (t) => {
  t.throws(() => personal(ResponseSubmitted, 'response_id', ['nothing']), /has no field nothing/);
  t.throws(() => personal(VoteCast, 'vote_id', ['vote_id']), /must stay readable/);
  t.equal(personal(VoteCast, 'vote_id', ['option_ids']).type, 'VoteCast');
});

t.test('a key store opened read-only finds keys and changes none; one never made finds none', async (t) => {
  const dir = tempDir(t);
  const writable = openSqliteSubjectKeys(dir);
  await writable.add(new Map([['s', Buffer.from('wrapped')]]));
  t.same([...(await writable.add(new Map([['s', Buffer.from('other')]])))].map(([, v]) => v.toString()), ['wrapped'], 'the first key stored wins');
  await writable.close();
  const reader = await openSubjectKeysAt({ kind: 'sqlite', path: join(dir, KEYS_FILE), readonly: true });
  t.same([...(await reader.find(['s', 'none']))].map(([k]) => k), ['s']);
  await t.rejects(reader.add(new Map()), /read-only/);
  await t.rejects(reader.erase(['s']), /read-only/);
  await reader.close();
  const none = openSqliteSubjectKeys(join(dir, 'never'), { readonly: true });
  t.same(await none.find(['s']), new Map());
  await t.rejects(none.add(new Map()), /read-only/);
  await t.rejects(none.erase([]), /read-only/);
  await none.close();
});

// The sealing store keeps the port's contract over the adapter it wraps (here the embedded one; KurrentDB's the same way).
t.test('the event-store contract holds through the sealing store', async (t) => {
  const dir = tempDir(t, 'contract');
  eventStoreContract(t, { open: async () => new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, openSqliteSubjectKeys(dir), SECRET)), erasesFromFeedAtOnce: true });
});

t.test('a key looked up is used again for a while; an erasure here drops it at once, one elsewhere within that while', async (t) => {
  const dir = tempDir(t);
  let clock = 0;
  const keys = openSqliteSubjectKeys(dir);
  t.teardown(() => keys.close());
  const here = new PersonalCodec(personalData, keys, SECRET, { now: () => clock });
  const elsewhere = new PersonalCodec(personalData, keys, SECRET, { now: () => clock });
  const [a, b] = await here.seal([response('ra', 'TEXT-A'), response('rb', 'TEXT-B')]);
  const stored = [a!, b!].map((event, i) => ({ ...event, id: `e${i}`, streamId: `response-r${i}`, revision: 0n, position: BigInt(i + 1), recordedAt: meta.occurred_at }) as never);
  const lookups: number[] = [];
  const find = keys.find.bind(keys);
  keys.find = async (subjects) => (lookups.push(subjects.length), find(subjects));

  t.equal((await here.open(stored)).filter(Boolean).length, 2, 'both open');
  t.same(lookups, [], 'keys made here are not looked up again while fresh');
  t.equal((await elsewhere.open(stored)).filter(Boolean).length, 2);
  t.same(lookups, [2], 'a codec without them looks them up once');
  await elsewhere.open(stored);
  t.same(lookups, [2], 'and then uses them while fresh');

  await here.forget(['ra']);
  t.same((await here.open(stored)).map((e) => e?.id), [undefined, 'e1'], 'erased here: unreadable here at once');
  t.equal((await elsewhere.open(stored)).filter(Boolean).length, 2, 'erased elsewhere: still fresh there');
  clock += KEY_FRESH_MS;
  t.same((await elsewhere.open(stored)).map((e) => e?.id), [undefined, 'e1'], 'and unreadable there once its keys are looked up again');

  // A point-in-time store's read models are a copy no erasure reaches: it looks every key up as it opens.
  const copy = new PersonalCodec(personalData, keys, SECRET, { now: () => clock, freshMs: 0 });
  lookups.length = 0;
  await copy.open(stored);
  await copy.open(stored);
  t.same(lookups, [2, 2], 'with no freshness, every open looks its keys up');
});

t.test('no two sealed events share a nonce, across many seals, one and several at a time, and each opens', async (t) => {
  const { store, dir } = open(t);
  // 400 seals of one event and 40 of ten: far more nonces than one draw of random bytes holds.
  const written: string[] = [];
  for (let i = 0; i < 400; i++) {
    written.push(`ONE-${i}`);
    await store.append(`response-one${i}`, [response(`one${i}`, `ONE-${i}`)], 'no_stream');
  }
  for (let i = 0; i < 40; i++) {
    const lot = Array.from({ length: 10 }, (_, j) => `lot${i}-${j}`);
    written.push(...lot.map((id) => `LOT-${id}`));
    await store.appendToStreams(lot.map((id) => ({ streamId: `response-${id}`, events: [response(id, `LOT-${id}`)], expected: 'no_stream' as const })));
  }
  const raw = await store.readFeed({ limit: 10_000 });
  const nonces = raw.map((record) => sealedOf(JSON.parse(record.data))!.iv);
  t.equal(nonces.length, 800);
  t.equal(new Set(nonces).size, 800, 'every nonce differs');
  // Read by another codec, which keeps nothing of what this one sealed: each box is opened.
  const { store: another } = open(t, dir);
  const read = await another.readAll({ limit: 10_000 });
  t.same(
    read.map((event) => (event.data.answers as { comment: string }).comment),
    written,
    'and every event opens to what was written',
  );
});

t.test('an event read back at once opens as written; a box altered under the same nonce is refused as any altered box is', async (t) => {
  const dir = tempDir(t);
  const keys = openSqliteSubjectKeys(dir);
  t.teardown(() => keys.close());
  const codec = new PersonalCodec(personalData, keys, SECRET);
  const event = response('r-late', 'JUST-SENT');
  const [sealed] = await codec.seal([event]);
  const stored = (data: unknown) => ({ id: 'e1', streamId: 'response-r-late', revision: 0n, position: 1n, type: sealed!.type, data: data as never, metadata: sealed!.metadata, recordedAt: 'now' });
  const [opened] = await codec.open([stored(sealed!.data)]);
  t.same(opened?.data, event.data, 'read back at once, it is the event as written');
  const envelope = sealedOf(sealed!.data)!;
  const box = Buffer.from(envelope.box, 'base64');
  box[0] = box[0]! ^ 1;
  const altered = { ...sealed!.data, [SEALED]: { ...envelope, box: box.toString('base64') } };
  await t.rejects(codec.open([stored(altered)]), new SealedUnreadable('r-late'), 'the altered box does not open, though its nonce is one sealed lately');
});

const OTHER_SECRET = 'another-secret-of-at-least-thirty-two-characters';

t.test('SECRET is checked against the key store: a new store keeps a check, another SECRET is refused, a read-only copy only compares', async (t) => {
  const dir = tempDir(t);
  const keys = openSqliteSubjectKeys(dir);
  t.teardown(() => keys.close());
  await new PersonalCodec(personalData, keys, SECRET).checkSecret();
  t.ok((await keys.find([SECRET_CHECK])).has(SECRET_CHECK), 'a store that keeps no key keeps a check at its first start');
  await t.resolves(new PersonalCodec(personalData, keys, SECRET).checkSecret(), 'the same SECRET again passes');
  await t.rejects(new PersonalCodec(personalData, keys, OTHER_SECRET).checkSecret(), new WrongSecret(), 'another SECRET is refused');
  const copy = openSqliteSubjectKeys(dir, { readonly: true });
  t.teardown(() => copy.close());
  await t.rejects(new PersonalCodec(personalData, copy, OTHER_SECRET).checkSecret({ readonly: true }), new WrongSecret(), 'a read-only copy refuses it too');
  const empty = openSqliteSubjectKeys(tempDir(t));
  t.teardown(() => empty.close());
  await new PersonalCodec(personalData, empty, SECRET).checkSecret({ readonly: true });
  t.same(await empty.find([SECRET_CHECK]), new Map(), 'a read-only open writes no check');
});

t.test('a store sealed before it kept a check: the check is kept once a sealed event opens under SECRET, never under another', async (t) => {
  const { store, dir } = open(t);
  await store.append('response-r1', [response('r1', 'BEFORE-CHECKS')], 'no_stream');
  const [raw] = await openSqliteEventStore(dir).readAll({ limit: 10 });
  const keys = openSqliteSubjectKeys(dir);
  t.teardown(() => keys.close());
  const wrong = new PersonalCodec(personalData, keys, OTHER_SECRET);
  await t.resolves(wrong.checkSecret(), 'with keys and no check, a start cannot tell yet');
  await t.rejects(wrong.open([raw!]), new SealedUnreadable('r1'), 'its first sealed event does not open');
  t.same(await keys.find([SECRET_CHECK]), new Map(), 'and no check is kept under the wrong SECRET');
  const right = new PersonalCodec(personalData, keys, SECRET);
  await right.checkSecret();
  const [opened] = await right.open([raw!]);
  t.equal((opened!.data.answers as { comment: string }).comment, 'BEFORE-CHECKS');
  await new Promise((resolve) => setImmediate(resolve));
  t.ok((await keys.find([SECRET_CHECK])).has(SECRET_CHECK), 'once one opened, the check is kept');
  await t.rejects(new PersonalCodec(personalData, keys, OTHER_SECRET).checkSecret(), new WrongSecret(), 'and another SECRET is refused at once');
});
