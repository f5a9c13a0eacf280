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
}
