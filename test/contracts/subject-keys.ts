import type { Test } from 'tap';
import type { SubjectKeyStore } from '../../src/infra/subject-keys/port.js';

/** What every subject-key store does: the first key stored wins, erased keys are gone, unknown subjects find nothing. */
export function subjectKeyContract(t: Test, open: () => Promise<SubjectKeyStore>): void {
  t.test('subject keys: add keeps the first, find answers those that have one, erase deletes for good', async (t) => {
    const store = await open();
    t.teardown(() => store.close());
    const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const [a, b] = [`a-${tag}`, `b-${tag}`];
    const added = await store.add(new Map([[a, Buffer.from('first-a')], [b, Buffer.from('first-b')]]));
    t.same([...added].map(([s, k]) => [s, k.toString()]).sort(), [[a, 'first-a'], [b, 'first-b']]);
    const again = await store.add(new Map([[a, Buffer.from('second-a')]]));
    t.equal(again.get(a)?.toString(), 'first-a', 'a subject never has two keys');
    await store.erase([a, `never-${tag}`]);
    t.same([...(await store.find([a, b, `never-${tag}`]))].map(([s]) => s), [b], 'the erased key is gone, the other stays');
    t.same(await store.add(new Map()), new Map());
    await store.erase([]);
  });

  t.test('subject keys: holdsOther answers whether a key other than the one named is kept', async (t) => {
    const store = await open();
    t.teardown(() => store.close());
    const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const [only, other] = [`only-${tag}`, `other-${tag}`];
    // A shared server's collection may hold other tests' keys: only the embedded one starts empty.
    if (store.kind === 'sqlite') t.equal(await store.holdsOther(only), false, 'an empty store holds none');
    await store.add(new Map([[only, Buffer.from('k')]]));
    if (store.kind === 'sqlite') t.equal(await store.holdsOther(only), false, 'the one named alone is not another');
    await store.add(new Map([[other, Buffer.from('k')]]));
    t.equal(await store.holdsOther(only), true, 'another subject\'s key is');
  });

  t.test('subject keys: a batch stored ahead in one add, then its unused part erased, as the ids made ahead use them', async (t) => {
    const store = await open();
    t.teardown(() => store.close());
    const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const batch = new Map(Array.from({ length: 256 }, (_, i) => [`r${i}-${tag}`, Buffer.from(`salt-${i}`)] as const));
    const stored = await store.add(batch);
    t.equal(stored.size, 256, 'every one stored, in one call');
    t.equal(stored.get(`r255-${tag}`)?.toString(), 'salt-255');
    const unused = [...batch.keys()].slice(128);
    await store.erase(unused);
    const found = await store.find([...batch.keys()]);
    t.equal(found.size, 128, 'the unused ones are gone');
    t.ok(unused.every((subject) => !found.has(subject)));
    t.equal(found.get(`r0-${tag}`)?.toString(), 'salt-0', 'the used ones stay');
  });
}
