import { readFileSync } from 'node:fs';
import t from 'tap';
import type { FeedRecord } from '../../src/infra/event-store/port.js';
import { formatLine, leafOf, parseLines, sealHash, sealVersionOf, type SealContent, type SealLine } from '../../src/seals/chain.js';

const event: FeedRecord = {
  id: '0d6f5e2c-7d1b-4f7e-9a55-0c7f3b1b2a10',
  streamId: 'response-rsp_1',
  revision: 0n,
  position: 42n,
  type: 'ResponseSubmitted',
  data: '{"response_id":"rsp_1","answers":{"rating":4}}',
  metadata: '{"schema_version":1,"occurred_at":"2026-11-22T10:00:00.000Z","actor":"public"}',
  recordedAt: '2026-11-22T10:00:00.001Z',
};

t.test('given an event, its leaf changes with each thing it is made of, and with nothing else', async (t) => {
  const leaf = leafOf(event);
  t.match(leaf, /^[A-Za-z0-9_-]{43}$/, 'SHA-256, base64url');
  t.equal(leafOf({ ...event }), leaf, 'the same event, the same leaf');
  t.equal(leafOf({ ...event, revision: 7n }), leaf, 'the revision follows from the stream, so it is not hashed');
  const changes: Array<[string, Partial<FeedRecord>]> = [
    ['position', { position: 43n }],
    ['stream', { streamId: 'response-rsp_2' }],
    ['type', { type: 'VoteCast' }],
    ['id', { id: '0d6f5e2c-7d1b-4f7e-9a55-0c7f3b1b2a11' }],
    ['recording time', { recordedAt: '2026-11-22T10:00:00.002Z' }],
    ['one byte of the data', { data: event.data.replace('4', '5') }],
    ['one byte of the metadata', { metadata: event.metadata.replace('public', 'publik') }],
  ];
  for (const [what, change] of changes) t.not(leafOf({ ...event, ...change }), leaf, what);
});

t.test('given seal lines, formatting then parsing gives them back in either version, whatever their stream names hold', async (t) => {
  const lines: SealLine[] = [
    { position: 1n, leaf: 'a'.repeat(43), stream: 'widget-wid_1', revision: 0n, type: 'WidgetCreated' },
    { position: 2n, leaf: 'b'.repeat(43), stream: 'response-rsp_1', revision: 3n, type: 'ResponseSubmitted', subject: 'rsp_1', also: ['guard-widget-wid_1-abc'] },
    { position: 18446744073709551615n, leaf: 'c'.repeat(43), stream: 'odd\tname\nwith %25 and %', revision: 18446744073709551615n, type: 'Foreign\tType', subject: 'x', also: [] },
  ];
  const text = lines.map((line) => formatLine(line, 2)).join('\n');
  t.equal(text.split('\n').length, 3, 'one line per event');
  t.equal(text.split('\n')[1], `2\t${'b'.repeat(43)}\tresponse-rsp_1\t3\tResponseSubmitted\trsp_1\tguard-widget-wid_1-abc`, 'version 2: the revision after the stream');
  t.same(parseLines(text, 2), lines);
  const withoutRevisions = lines.map(({ revision: _, ...line }) => line);
  const first = lines.map((line) => formatLine(line, 1)).join('\n');
  t.equal(first.split('\n')[0], `1\t${'a'.repeat(43)}\twidget-wid_1\tWidgetCreated`, 'version 1: no revision');
  t.same(parseLines(first, 1), withoutRevisions);
  t.throws(() => formatLine(withoutRevisions[0]!, 2), /no revision/, 'a line of version 2 cannot leave the revision out');
  t.same(parseLines('', 2), [], 'a seal of no events');
  t.throws(() => parseLines('1\tleaf-only', 1), /line 1 of the seal is malformed/);
  t.throws(() => parseLines('x\tleaf\ts\tt', 1), /malformed/);
  t.throws(() => parseLines(first, 2), /line 1 of the seal is malformed/, 'a line of version 1 read as version 2: its type is no revision');
  t.throws(() => parseLines('1\tleaf\ts\t-1\tt', 2), /malformed/, 'a revision is a whole number');
});

t.test('given a seal, its hash changes with its version, number, link, range and lines', async (t) => {
  const seal = { version: 2 as const, seal: 3, previous: 'f'.repeat(64), from: 10n, through: 20n, events: '11\tleaf\ts\t0\tt' };
  const hash = sealHash(seal);
  t.match(hash, /^[0-9a-f]{64}$/);
  const changes: Array<[string, Partial<SealContent>]> = [
    ['version', { version: 1 }],
    ['number', { seal: 4 }],
    ['previous seal', { previous: 'e'.repeat(64) }],
    ['from', { from: 11n }],
    ['through', { through: 21n }],
    ['lines', { events: '11\tleaF\ts\t0\tt' }],
    ['a revision', { events: '11\tleaf\ts\t1\tt' }],
  ];
  for (const [what, change] of changes) t.not(sealHash({ ...seal, ...change }), hash, what);
  t.equal(sealHash({ ...seal, sealedAt: '2026-11-27T10:00:00.000Z' }), hash, 'a seal of version 2 does not hash its time');
});

t.test('given a seal of version 3, its hash covers its time as well, and cannot be made without one', async (t) => {
  const seal = { version: 3 as const, seal: 3, previous: 'f'.repeat(64), from: 10n, through: 20n, sealedAt: '2026-11-27T10:00:00.000Z', events: '11\tleaf\ts\t0\tt' };
  const hash = sealHash(seal);
  t.not(hash, sealHash({ ...seal, version: 2 }), 'not the hash of version 2');
  t.not(sealHash({ ...seal, sealedAt: '2026-11-27T10:00:00.001Z' }), hash, 'its time');
  t.not(sealHash({ ...seal, events: '11\tleaF\ts\t0\tt' }), hash, 'its lines');
  t.throws(() => sealHash({ ...seal, sealedAt: undefined }), /hashes its time/);
  t.same(parseLines(seal.events, 3), parseLines(seal.events, 2), 'its lines are laid out as those of version 2');
});

t.test('given a seal of version 1, its hash is made as version 1 made it', async (t) => {
  // LogSealed.v1.json in the event fixtures, as sealed by the code of its time.
  const fixture = JSON.parse(readFileSync(new URL('../fixtures/events/LogSealed.v1.json', import.meta.url), 'utf8')) as { data: { seal: number; previous: string | null; from: string; through: string; events: string; hash: string } };
  const { data } = fixture;
  t.equal(sealHash({ version: 1, seal: data.seal, previous: data.previous, from: BigInt(data.from), through: BigInt(data.through), events: data.events }), data.hash);
  t.same(parseLines(data.events, 1).map((line) => line.type), ['WidgetCreated', 'ResponseSubmitted']);
});

t.test('given a seal\'s metadata, its version: 1 where none is recorded, none for one this code does not know', async (t) => {
  t.equal(sealVersionOf({ schema_version: 2 }), 2);
  t.equal(sealVersionOf({ schema_version: 1 }), 1);
  t.equal(sealVersionOf({ occurred_at: 'x' }), 1);
  t.equal(sealVersionOf({ schema_version: 3 }), 3);
  t.equal(sealVersionOf({ schema_version: 4 }), undefined);
  t.equal(sealVersionOf({ schema_version: '2' }), undefined);
});
