/**
 * Subjects reserved ahead: a response's or vote's id handed out with its
 * key already durable, so that sealing its first event writes nothing to
 * the key store; below a steady rate nothing is reserved; ids keep the
 * order they are taken in; salts nothing was sealed under are deleted.
 */
import t, { type Test } from 'tap';
import { personalData } from '../../src/domain-events.js';
import { createIdGenerator } from '../../src/infra/ids.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import type { SubjectKeyStore } from '../../src/infra/subject-keys/port.js';
import { openSqliteSubjectKeys } from '../../src/infra/subject-keys/sqlite.js';
import { PersonalCodec } from '../../src/kernel/personal.js';
import { PersonalEventStore } from '../../src/kernel/personal-store.js';
import { RESERVE_BATCH, RESERVED_KEPT_MS, RESERVED_MAX_AGE_MS, ReservedSubjects } from '../../src/kernel/reserved-subjects.js';
import { responseEvent, SECRET } from '../support/sealed.js';
import { tempDir } from '../support/services.js';

const response = (id: string, text: string) => responseEvent(id, text);

/** The key store's writes as they happen: adds by their size, erasures by theirs. */
function counting(inner: SubjectKeyStore, failAdds?: () => Error | undefined) {
  const adds: number[] = [];
  const erased: string[][] = [];
  const store: SubjectKeyStore = {
    kind: inner.kind,
    find: (subjects) => inner.find(subjects),
    holdsOther: (subject) => inner.holdsOther(subject),
    close: () => inner.close(),
    add: async (keys) => {
      adds.push(keys.size);
      const fail = failAdds?.();
      if (fail) throw fail;
      return inner.add(keys);
    },
    erase: async (subjects) => {
      erased.push([...subjects]);
      return inner.erase(subjects);
    },
  };
  return { store, adds, erased };
}

/** A store, its codec and a pool on one clock the test moves. */
function given(t: Test, options: { failAdds?: () => Error | undefined; onError?: (error: unknown) => void } = {}) {
  const dir = tempDir(t);
  const clock = { now: 1_000_000 };
  const now = () => clock.now;
  const { store: keys, adds, erased } = counting(openSqliteSubjectKeys(dir), options.failAdds);
  const store = new PersonalEventStore(openSqliteEventStore(dir), new PersonalCodec(personalData, keys, SECRET, { now }));
  const reserved = new ReservedSubjects(store.codec, createIdGenerator(), ['rsp', 'vote'], { now, ...(options.onError ? { onError: options.onError } : {}) });
  t.teardown(() => store.close());
  /** A second connection to the key file, as another process would open it. */
  const onDisk = async (subjects: string[]) => {
    const reader = openSqliteSubjectKeys(dir, { readonly: true });
    try {
      return [...(await reader.find(subjects)).keys()].sort();
    } finally {
      await reader.close();
    }
  };
  /** Lets a refill or release started by the last id taken finish. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  return { dir, clock, store, reserved, adds, erased, onDisk, settle };
}

t.test('at a steady rate, ids come with their keys durable, and their first events are sealed without a key write', async (t) => {
  const { store, reserved, adds, onDisk, settle } = given(t);
  const first = Array.from({ length: 7 }, () => reserved.ids('rsp'));
  await settle();
  t.same(adds, [], 'seven ids in a second: none reserved, nothing written');
  const eighth = reserved.ids('rsp');
  t.same(await onDisk([eighth]), [], 'the eighth starts a refill and is handed out at once, its salt not yet written');
  // Sealed before the refill's commit: it waits for it, and writes nothing of its own.
  await store.append(`response-${eighth}`, [response(eighth, 'EIGHTH')], 'no_stream');
  t.equal(adds.length, 1, 'one write: the refill');
  const batch = adds[0]!;
  t.ok(batch >= 16 && batch <= RESERVE_BATCH, `of ${batch} subjects`);
  t.same(await onDisk([eighth]), [eighth], 'its salt was durable before its event was appended');
  const next = Array.from({ length: 4 }, () => reserved.ids('rsp'));
  t.same(await onDisk(next), [...next].sort(), 'each id handed out after the refill has its salt in the key file already, as another connection reads it');
  t.same(await onDisk(first), [], 'those made before the refill have none until sealed');
  await Promise.all(next.map((id) => store.append(`response-${id}`, [response(id, `TEXT-${id}`)], 'no_stream')));
  t.equal(adds.length, 1, 'their events are sealed under the reserved keys: no write of the key store');
  for (const id of [eighth, ...next]) t.match((await store.readStream(`response-${id}`))[0]!.data.answers, { comment: /^(EIGHTH|TEXT-)/ }, 'and read back');
  await store.append(`response-${first[0]}`, [response(first[0]!, 'OLD')], 'no_stream');
  t.equal(adds.length, 2, 'an id made as it was asked for stores its key as its first event is sealed');
  t.equal(reserved.ids('acc').startsWith('acc_'), true, 'a prefix not pooled is made as asked for');
  await settle();
});

t.test('ids are handed out in the order they are taken, none older than the bound, and one refill at a time', async (t) => {
  const { clock, reserved, adds, settle } = given(t);
  const taken: string[] = [];
  for (let round = 0; round < 15; round++) {
    for (let i = 0; i < 20; i++) taken.push(reserved.ids('vote'));
    await settle();
  }
  t.ok(adds.length >= 2, 'the pool refilled as it ran low');
  t.ok(adds.every((size) => size <= RESERVE_BATCH), 'at most a batch at a time');
  for (let i = 0; i < 40; i++) taken.push(reserved.ids('vote'));
  t.same(taken, [...taken].sort(), 'every id sorts after the one taken before it');
  t.equal(new Set(taken).size, taken.length);
  await settle();
  clock.now += RESERVED_MAX_AGE_MS + 1;
  const late = reserved.ids('vote');
  t.ok(late > taken[taken.length - 1]!, 'reserved too long ago: not handed out');
  await settle();
});

t.test('below the rate nothing is reserved', async (t) => {
  const { clock, reserved, adds, settle } = given(t);
  for (let i = 0; i < 20; i++) {
    reserved.ids('rsp');
    clock.now += 200;
  }
  await settle();
  t.same(adds, [], 'five ids a second: each stores its key as it is sealed');
});

t.test('salts nothing was sealed under are deleted after a while, and on close; a subject released and used after all gets a key then', async (t) => {
  const { clock, store, reserved, adds, erased, onDisk, settle } = given(t);
  for (let i = 0; i < 7; i++) reserved.ids('rsp');
  const refused = reserved.ids('rsp');
  const sealed = reserved.ids('rsp');
  await store.append(`response-${sealed}`, [response(sealed, 'KEPT')], 'no_stream');
  const pooled = adds[0]!;
  clock.now += RESERVED_KEPT_MS + 1;
  reserved.ids('rsp');
  await settle();
  t.equal(erased.length, 1, 'one release');
  t.equal(erased[0]!.length, pooled - 1, 'of every reserved subject but the one sealed under');
  t.ok(erased[0]!.includes(refused), 'the id handed out to a submission that never came is among them');
  t.same(await onDisk([refused, sealed]), [sealed], 'its salt is gone; the sealed one stays');
  const addsBefore = adds.length;
  await store.append(`response-${refused}`, [response(refused, 'LATE')], 'no_stream');
  t.equal(adds.length, addsBefore + 1, 'used after all: its key is stored as it is sealed');
  t.equal(((await store.readStream(`response-${refused}`))[0]!.data.answers as { comment: string }).comment, 'LATE');

  for (let i = 0; i < 8; i++) reserved.ids('rsp');
  await settle();
  const left = reserved.ids('rsp');
  t.same(await onDisk([left]), [left]);
  await reserved.close();
  t.same(await onDisk([left, sealed, refused]), [refused, sealed].sort(), 'on close, the salts still reserved are deleted; those sealed under stay');
  t.ok(reserved.ids('rsp').startsWith('rsp_'), 'closed, it makes ids as asked for');
});

t.test('a refill that fails is reported; what is sealed under its ids stores its keys itself', async (t) => {
  const errors: unknown[] = [];
  const { store, reserved, adds, settle } = given(t, { failAdds: () => (adds.length === 1 ? new Error('disk full') : undefined), onError: (error) => errors.push(error) });
  for (let i = 0; i < 7; i++) reserved.ids('rsp');
  const id = reserved.ids('rsp');
  await store.append(`response-${id}`, [response(id, 'X')], 'no_stream');
  t.match(errors, [{ message: 'disk full' }]);
  t.equal(adds.length, 2, 'the refill, then its own key');
  t.equal(((await store.readStream(`response-${id}`))[0]!.data.answers as { comment: string }).comment, 'X', 'sealed under a key stored as it was sealed');
  const after = reserved.ids('rsp');
  t.ok(after > id, 'the failed batch is not handed out');
  await settle();
});
