import t from 'tap';
import type { FeedRecord } from '../../src/infra/event-store/port.js';
import { formatLine, leafOf, parseLines, sealHash, type SealLine } from '../../src/seals/chain.js';

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

t.test('given seal lines, formatting then parsing gives them back, whatever their stream names hold', async (t) => {
  const lines: SealLine[] = [
    { position: 1n, leaf: 'a'.repeat(43), stream: 'widget-wid_1', type: 'WidgetCreated' },
    { position: 2n, leaf: 'b'.repeat(43), stream: 'response-rsp_1', type: 'ResponseSubmitted', subject: 'rsp_1', also: ['guard-widget-wid_1-abc'] },
    { position: 18446744073709551615n, leaf: 'c'.repeat(43), stream: 'odd\tname\nwith %25 and %', type: 'Foreign\tType', subject: 'x', also: [] },
  ];
  const text = lines.map(formatLine).join('\n');
  t.equal(text.split('\n').length, 3, 'one line per event');
  t.same(parseLines(text), lines);
  t.same(parseLines(''), [], 'a seal of no events');
  t.throws(() => parseLines('1\tleaf-only'), /line 1 of the seal is malformed/);
  t.throws(() => parseLines('x\tleaf\ts\tt'), /malformed/);
});

t.test('given a seal, its hash changes with its number, link, range and lines', async (t) => {
  const seal = { seal: 3, previous: 'f'.repeat(64), from: 10n, through: 20n, events: '11\tleaf\ts\tt' };
  const hash = sealHash(seal);
  t.match(hash, /^[0-9a-f]{64}$/);
  const changes: Array<[string, Partial<typeof seal>]> = [
    ['number', { seal: 4 }],
    ['previous seal', { previous: 'e'.repeat(64) }],
    ['from', { from: 11n }],
    ['through', { through: 21n }],
    ['lines', { events: '11\tleaF\ts\tt' }],
  ];
  for (const [what, change] of changes) t.not(sealHash({ ...seal, ...change }), hash, what);
});
