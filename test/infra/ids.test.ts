import t from 'tap';
import { createEventIdGenerator, createIdGenerator } from '../../src/infra/ids.js';

t.test('ids: prefixed ULIDs, unique, in creation order, random across generators', async (t) => {
  const ids = createIdGenerator();
  const made = Array.from({ length: 20_000 }, () => ids('rsp'));
  t.ok(made.every((id) => /^rsp_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)), 'Crockford base32 after the prefix');
  t.equal(new Set(made).size, made.length, 'no repeats over several pool refills');
  t.same([...made].sort(), made, 'sorted as created, within a millisecond too');
  const other = createIdGenerator();
  const a = ids('x').slice(12);
  const b = other('x').slice(12);
  t.not(a, b, 'another generator draws other random bits');
  // Each of the 32 characters turns up in the random parts: the draw is not stuck or narrowed.
  const seen = new Set(Array.from({ length: 200 }, () => createIdGenerator()('x').slice(12)).join(''));
  t.equal(seen.size, 32);
});

t.test('event ids: UUIDs of version 7 that begin with their millisecond, unique, random after it', async (t) => {
  let ms = Date.UTC(2026, 10, 23, 9, 0, 0);
  const ids = createEventIdGenerator(() => ms);
  const first = Array.from({ length: 5_000 }, () => ids());
  ms += 1;
  const later = ids();
  t.ok([...first, later].every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)), 'version 7, RFC 9562 variant');
  t.equal(Number.parseInt(later.replaceAll('-', '').slice(0, 12), 16), ms, 'the first 48 bits are the millisecond');
  t.ok(first.every((id) => id < later), 'a later millisecond sorts after every earlier id');
  t.equal(new Set(first).size, first.length, 'no repeats within one millisecond, over several pool refills');
});
