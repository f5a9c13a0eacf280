import t from 'tap';
import { createIdGenerator } from '../../src/infra/ids.js';

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
