/**
 * The event store contract. Every adapter runs this suite unchanged: the
 * embedded SQLite one always, KurrentDB when EVENTSTORE_URL is set. Streams get
 * a random prefix so the suite can run against a server that holds other data.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Test } from 'tap';
import { erasureState } from '../../src/erasure/state.js';
import { projections } from '../../projections/index.js';
import { checkpointKey } from '../../src/kernel/feed/projection.js';
import { ProjectionRunner } from '../../src/kernel/feed/runner.js';
import { catalog } from '../../src/domain-events.js';
import { ErasureProcess } from '../../src/erasure/process.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import {
  AppendTooLarge,
  MAX_APPEND_BYTES,
  PartlyAppended,
  RevisionLimitReached,
  WrongExpectedRevision,
  appendInOrder,
  appendSize,
  type EventStore,
  type NewEvent,
  type StoredEvent,
} from '../../src/infra/event-store/port.js';

export interface EventStoreContractOptions {
  open: () => Promise<EventStore>;
  /**
   * Whether deleteStream also removes the events from the global feed at once.
   * SQLite does; KurrentDB keeps them in $all until a scavenge runs.
   */
  erasesFromFeedAtOnce: boolean;
}

const ev = (type: string, n: number): NewEvent => ({
  type,
  data: { n, text: `zażółć 🎉 "quoted" \\ ${n}`, nested: { list: [1, 'two', null, true] } },
  metadata: { schema_version: 1, actor: 'contract' },
});

async function collectFeed(store: EventStore, after: bigint, prefix: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  let from = after;
  for (;;) {
    const page = await store.readAll({ after: from, limit: 50 });
    if (page.length === 0) return out;
    out.push(...page.filter((e) => e.streamId.startsWith(prefix)));
    from = page[page.length - 1]!.position;
  }
}

/**
 * Fails instead of hanging when a subscription never delivers. The bound is
 * far above any wait expected even against a remote server on a loaded
 * machine: how soon events arrive is not what these tests assert.
 */
function withDeadline<T>(promise: Promise<T>, message: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

export function eventStoreContract(t: Test, options: EventStoreContractOptions): void {
  let store: EventStore;
  let prefix: string;
  t.before(async () => {
    store = await options.open();
  });
  t.teardown(async () => {
    await store?.close();
  });
  t.beforeEach(() => {
    prefix = `c${randomUUID().replaceAll('-', '')}`;
  });
  const stream = (name: string) => `${prefix}-${name}`;

  t.test('append to a new stream and read it back in order', async (t) => {
    const r = await store.append(stream('a'), [ev('Opened', 1), ev('Changed', 2)], 'no_stream');
    t.equal(r.nextRevision, 1n);
    const events = await store.readStream(stream('a'));
    t.same(
      events.map((e) => [e.type, e.revision, e.data, e.metadata, e.streamId]),
      [
        ['Opened', 0n, ev('Opened', 1).data, ev('Opened', 1).metadata, stream('a')],
        ['Changed', 1n, ev('Changed', 2).data, ev('Changed', 2).metadata, stream('a')],
      ],
    );
    t.equal(events[1]!.position, r.position, 'append answers the position of its last event');
    t.ok(events[0]!.position < events[1]!.position, 'positions grow');
    t.not(events[0]!.id, events[1]!.id, 'event ids are unique');
    t.ok(!Number.isNaN(Date.parse(events[0]!.recordedAt)), 'recordedAt is a timestamp');
  });

  t.test('a missing stream reads as empty', async (t) => {
    t.same(await store.readStream(stream('missing')), []);
  });

  t.test('no_stream fails once the stream exists', async (t) => {
    await store.append(stream('b'), [ev('Opened', 1)], 'no_stream');
    await t.rejects(store.append(stream('b'), [ev('Opened', 2)], 'no_stream'), WrongExpectedRevision);
    t.equal((await store.readStream(stream('b'))).length, 1, 'nothing was appended');
  });

  t.test('an exact revision must match', async (t) => {
    await store.append(stream('c'), [ev('Opened', 1), ev('Changed', 2)], 'no_stream');
    const err = await store.append(stream('c'), [ev('Changed', 3)], 0n).catch((e: unknown) => e);
    t.type(err, WrongExpectedRevision);
    t.equal((err as WrongExpectedRevision).actual, 1n, 'the error names the actual revision');
    const ok = await store.append(stream('c'), [ev('Changed', 3)], 1n);
    t.equal(ok.nextRevision, 2n);
    await t.rejects(store.append(stream('nothing-here'), [ev('Opened', 1)], 0n), WrongExpectedRevision);
  });

  t.test('any appends whatever the stream holds', async (t) => {
    await store.append(stream('d'), [ev('Opened', 1)], 'any');
    const r = await store.append(stream('d'), [ev('Changed', 2)], 'any');
    t.equal(r.nextRevision, 1n);
  });

  t.test('concurrent appends with one expected revision: exactly one wins', async (t) => {
    await store.append(stream('e'), [ev('Opened', 0)], 'no_stream');
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.append(stream('e'), [ev('Changed', i)], 0n)),
    );
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) {
      if (r.status === 'rejected') t.type(r.reason, WrongExpectedRevision);
    }
    t.equal((await store.readStream(stream('e'))).length, 2);
  });

  t.test('an append to several streams stores its parts in the order given and answers the last event', async (t) => {
    await store.append(stream('m2'), [ev('Before', 0)], 'no_stream');
    const r = await store.appendToStreams([
      { streamId: stream('m1'), events: [ev('A', 1), ev('B', 2)], expected: 'no_stream' },
      { streamId: stream('m2'), events: [ev('C', 3)], expected: 0n, below: 2n },
      { streamId: stream('m3'), events: [ev('D', 4)], expected: 'any' },
    ]);
    const feed = (await collectFeed(store, 0n, prefix)).filter((e) => e.type !== 'Before');
    t.same(feed.map((e) => [e.streamId, e.revision, e.type]), [
      [stream('m1'), 0n, 'A'],
      [stream('m1'), 1n, 'B'],
      [stream('m2'), 1n, 'C'],
      [stream('m3'), 0n, 'D'],
    ]);
    t.equal(r.position, feed[3]!.position, 'the position of the last part\'s last event');
    t.equal(r.nextRevision, 0n, 'the revision of the last part\'s last event');
    if (store.atomicAcrossStreams) {
      t.same(feed.map((e) => e.position - feed[0]!.position), [0n, 1n, 2n, 3n], 'at consecutive positions');
    }
  });

  t.test('a refused part of an append to several streams: refused as its own append would be, naming its stream', async (t) => {
    await store.append(stream('taken'), [ev('Guard', 0)], 'no_stream');
    await store.append(stream('full'), [ev('Slot', 0), ev('Slot', 1)], 'no_stream');
    const refusal = await store
      .appendToStreams([
        { streamId: stream('first'), events: [ev('Slot', 1)], expected: 'any' },
        { streamId: stream('taken'), events: [ev('Guard', 2)], expected: 'no_stream' },
        { streamId: stream('never'), events: [ev('Response', 3)], expected: 'no_stream' },
      ])
      .catch((e: unknown) => e);
    t.type(refusal, WrongExpectedRevision);
    t.equal((refusal as WrongExpectedRevision).streamId, stream('taken'));
    t.same(await store.readStream(stream('never')), [], 'nothing after the refused part');
    const limit = await store
      .appendToStreams([
        { streamId: stream('full'), events: [ev('Slot', 2)], expected: 'any', below: 2n },
        { streamId: stream('never'), events: [ev('Response', 3)], expected: 'no_stream' },
      ])
      .catch((e: unknown) => e);
    t.type(limit, RevisionLimitReached, 'a part whose event would take revision 2 where 2 is the limit');
    t.equal((limit as RevisionLimitReached).streamId, stream('full'));
    t.same(await store.readStream(stream('never')), [], 'nothing after the part over its limit');
    if (store.atomicAcrossStreams) {
      t.same(await store.readStream(stream('first')), [], 'atomic: nothing before the refused part either');
      t.equal((await store.readStream(stream('full'))).length, 2, 'atomic: nor the part over its limit');
    } else {
      t.equal((await store.readStream(stream('first'))).length, 1, 'part by part: the part before the refused one stays');
    }
  });

  t.test('atomic stores: a part without events is a condition on its stream, checked with the rest and storing nothing', async (t) => {
    // Part by part, a condition would not hold until the parts after it are stored: such stores are never given one.
    if (!store.atomicAcrossStreams) return void t.pass('appends part by part: no conditions');
    await store.append(stream('object'), [ev('Made', 0), ev('Changed', 1)], 'no_stream');
    const held = await store.appendToStreams([
      { streamId: stream('object'), events: [], expected: 1n },
      { streamId: stream('answer1'), events: [ev('Answered', 2)], expected: 'no_stream' },
    ]);
    const [answer] = await store.readStream(stream('answer1'));
    t.equal(held.position, answer!.position, 'the append answers its last stored event');
    t.equal(held.nextRevision, 0n);
    t.equal((await store.readStream(stream('object'))).length, 2, 'the condition stored nothing');
    await store.append(stream('object'), [ev('Closed', 3)], 1n);
    const refused = await store
      .appendToStreams([
        { streamId: stream('object'), events: [], expected: 1n },
        { streamId: stream('answer2'), events: [ev('Answered', 4)], expected: 'no_stream' },
      ])
      .catch((e: unknown) => e);
    t.type(refused, WrongExpectedRevision, 'the object moved on: refused');
    t.equal((refused as WrongExpectedRevision).streamId, stream('object'));
    t.same(await store.readStream(stream('answer2')), [], 'and nothing of it stored');
    await store.deleteStreams([stream('object')]);
    const gone = await store.appendToStreams([{ streamId: stream('object'), events: [], expected: 2n }, { streamId: stream('answer3'), events: [ev('Answered', 5)], expected: 'no_stream' }]).catch((e: unknown) => e);
    t.type(gone, WrongExpectedRevision, 'a deleted stream holds no revision');
    await t.rejects(store.appendToStreams([{ streamId: stream('object'), events: [], expected: 'any' }]), /at least one event/, 'conditions alone append nothing');
  });

  t.test('part by part (appendInOrder): a failure other than a refusal after a stored part is PartlyAppended; before any, the failure itself', async (t) => {
    const tooLarge = { type: 'Big', data: { text: 'x'.repeat(MAX_APPEND_BYTES) }, metadata: { schema_version: 1 } };
    const partly = await appendInOrder(store, [
      { streamId: stream('p1'), events: [ev('Slot', 1)], expected: 'no_stream' },
      { streamId: stream('p2'), events: [tooLarge], expected: 'no_stream' },
    ]).catch((e: unknown) => e);
    t.type(partly, PartlyAppended);
    t.equal((partly as PartlyAppended).stored, 1);
    t.type((partly as PartlyAppended).cause, AppendTooLarge);
    t.equal((await store.readStream(stream('p1'))).length, 1, 'the part before it is stored');
    await t.rejects(appendInOrder(store, [{ streamId: stream('p3'), events: [tooLarge], expected: 'no_stream' }]), AppendTooLarge);
  });

  t.test('readStream honours fromRevision and maxCount', async (t) => {
    await store.append(stream('f'), [1, 2, 3, 4, 5].map((n) => ev('Changed', n)), 'no_stream');
    const page = await store.readStream(stream('f'), { fromRevision: 1n, maxCount: 2 });
    t.same(page.map((e) => e.revision), [1n, 2n]);
  });

  t.test('the global feed holds every stream in append order and pages by position', async (t) => {
    const start = await store.headPosition();
    await store.append(stream('g1'), [ev('A', 1)], 'no_stream');
    await store.append(stream('g2'), [ev('B', 2), ev('C', 3)], 'no_stream');
    await store.append(stream('g1'), [ev('D', 4)], 0n);
    const feed = await collectFeed(store, start, prefix);
    t.same(feed.map((e) => e.type), ['A', 'B', 'C', 'D']);
    for (let i = 1; i < feed.length; i++) t.ok(feed[i - 1]!.position < feed[i]!.position);
    const afterSecond = await collectFeed(store, feed[1]!.position, prefix);
    t.same(afterSecond.map((e) => e.type), ['C', 'D'], 'after is exclusive');
    const head = await store.headPosition();
    t.ok(head >= feed[3]!.position, 'head is at or past the newest event');
    const limited = await store.readAll({ after: start, limit: 1 });
    t.equal(limited.length, 1, 'limit bounds the page');
  });

  t.test("readAccount: one account's events in feed order, those of its objects' streams included, and no other's", async (t) => {
    const mine = `${prefix}-acc-mine`;
    const theirs = `${prefix}-acc-theirs`;
    const named = (type: string, account: string | undefined, n: number): NewEvent => ({ type, data: { ...(account ? { account_id: account } : {}), n }, metadata: { schema_version: 1 } });
    // A form's stream: its first event names the owner, the later ones do not.
    await store.append(stream('form-a'), [named('Created', mine, 1), named('Changed', undefined, 2)], 'no_stream');
    await store.append(stream('form-b'), [named('Created', theirs, 3)], 'no_stream');
    await store.append(stream('form-a'), [named('Published', undefined, 4)], 1n);
    await store.append(stream('form-b'), [named('Published', undefined, 5)], 0n);
    // An event that names the account itself, in a stream whose first event named another.
    await store.append(stream('form-b'), [named('Answered', mine, 6)], 1n);
    await store.append(stream('loose'), [named('Loose', undefined, 7), named('Loose', mine, 8)], 'no_stream');
    await store.append(stream('gone'), [named('Created', mine, 9)], 'no_stream');
    const read = async (account: string, after = 0n, limit = 1000) => store.readAccount(account, { after, limit });
    const all = await read(mine);
    t.same(all.map((e) => e.data.n), [1, 2, 4, 6, 8, 9], 'its own, in feed order');
    for (let i = 1; i < all.length; i++) t.ok(all[i - 1]!.position < all[i]!.position);
    t.match(all[0], { streamId: stream('form-a'), revision: 0n, type: 'Created', data: { account_id: mine, n: 1 }, metadata: { schema_version: 1 } });
    const feed = await collectFeed(store, 0n, prefix);
    t.same(all.map((e) => e.position), feed.filter((e) => [1, 2, 4, 6, 8, 9].includes(e.data.n as number)).map((e) => e.position), 'at their feed positions');
    t.same((await read(theirs)).map((e) => e.data.n), [3, 5]);
    t.same((await read(mine, all[1]!.position, 2)).map((e) => e.data.n), [4, 6], 'after is exclusive; limit bounds the page');
    t.same(await read(`${prefix}-acc-nobody`), [], 'an account without events reads as empty');
    await store.deleteStreams([stream('gone')]);
    t.same((await read(mine)).map((e) => e.data.n), [1, 2, 4, 6, 8], "a deleted stream's events are not read");
    await store.append(stream('form-a'), [named('Deleted', mine, 10)], 2n);
    t.same((await read(mine, all.at(-3)!.position)).map((e) => e.data.n), [8, 10], 'what comes later is read too');
  });

  t.test('readFeed: the same page as readAll, with data and metadata as the JSON text stored', async (t) => {
    const start = await store.headPosition();
    await store.append(stream('f1'), [ev('A', 1), ev('B', 2)], 'no_stream');
    const [feed, parsed] = await Promise.all([store.readFeed({ after: start, limit: 50 }), store.readAll({ after: start, limit: 50 })]);
    const ours = feed.filter((e) => e.streamId.startsWith(prefix));
    const theirs = parsed.filter((e) => e.streamId.startsWith(prefix));
    t.same(
      ours.map(({ data, metadata, ...rest }) => ({ ...rest, data: JSON.parse(data), metadata: JSON.parse(metadata) })),
      theirs.map(({ dataText, ...rest }) => rest),
      'every field alike once parsed',
    );
    // The embedded store reads the data as text and hands it on; KurrentDB's client parses it first, and gives none.
    t.same(
      theirs.map((e) => e.dataText ?? null),
      store.kind === 'sqlite' ? ours.map((e) => e.data) : ours.map(() => null),
      'the data as stored, where the store has it as text',
    );
    // What the append wrote, byte for byte: the hash of the history is a hash of this text.
    t.same(ours.map((e) => e.data), [JSON.stringify(ev('A', 1).data), JSON.stringify(ev('B', 2).data)]);
    t.equal(ours[0]!.metadata, JSON.stringify(ev('A', 1).metadata));
    t.equal((await store.readFeed({ after: start, limit: 1 })).length, 1, 'limit bounds the page');
  });

  t.test('a subscription catches up, then delivers live events', async (t) => {
    const start = await store.headPosition();
    await store.append(stream('s'), [ev('Before', 1), ev('Before', 2)], 'no_stream');
    const sub = store.subscribe({ after: start, batchSize: 10 });
    const seen: string[] = [];
    let caughtUp = () => undefined as void;
    const before = new Promise<void>((resolve) => (caughtUp = resolve));
    const done = (async () => {
      for await (const batch of sub) {
        t.ok(batch.length <= 10, 'batches respect batchSize');
        for (const e of batch) if (e.streamId.startsWith(prefix)) seen.push(e.type);
        if (seen.length >= 2) caughtUp();
        if (seen.length >= 4) break;
      }
    })();
    await withDeadline(before, 'the subscription did not catch up');
    // Appended only now, after the catch-up delivered what was stored: these come live.
    await store.append(stream('s'), [ev('Live', 3)], 1n);
    await store.append(stream('s2'), [ev('Live', 4)], 'no_stream');
    await withDeadline(done, 'the live events never came');
    await sub.close();
    t.same(seen, ['Before', 'Before', 'Live', 'Live']);
  });

  t.test('a closed subscription ends its iteration', async (t) => {
    const sub = store.subscribe({ after: await store.headPosition(), batchSize: 10 });
    let delivered = () => undefined as void;
    const first = new Promise<void>((resolve) => (delivered = resolve));
    const done = (async () => {
      let batches = 0;
      for await (const batch of sub) {
        batches++;
        if (batch.some((e) => e.streamId.startsWith(prefix))) delivered();
      }
      return batches;
    })();
    await store.append(stream('c'), [ev('Opened', 1)], 'no_stream');
    // Closed while it waits for more, after it has delivered what there was.
    await withDeadline(first, 'the subscription delivered nothing');
    await sub.close();
    t.ok((await withDeadline(done, 'close did not end it')) >= 1);
  });

  t.test('deleteStreams removes the streams', async (t) => {
    const start = await store.headPosition();
    await store.append(stream('gone'), [ev('Secret', 1)], 'no_stream');
    await store.append(stream('gone too'), [ev('Secret', 3), ev('Secret', 4)], 'no_stream');
    await store.append(stream('kept'), [ev('Kept', 2)], 'no_stream');
    await store.deleteStreams([stream('gone'), stream('gone too'), stream('never-existed')]);
    t.same(await store.readStream(stream('gone')), []);
    t.same(await store.readStream(stream('gone too')), []);
    t.equal((await store.readStream(stream('kept'))).length, 1, 'other streams are untouched');
    await store.deleteStreams([stream('gone'), stream('never-existed')]);
    t.same(await store.readStream(stream('gone')), [], 'deleting them again changes nothing');
    await store.deleteStreams([]);
    if (options.erasesFromFeedAtOnce) {
      const feed = await collectFeed(store, start, prefix);
      t.same(feed.map((e) => e.type), ['Kept'], 'the deleted events left the global feed too');
    }
  });

  t.test('expunge after deletes keeps every other stream readable and writable', async (t) => {
    await store.append(stream('gone'), [ev('Secret', 1), ev('Secret', 2)], 'no_stream');
    await store.append(stream('kept'), [ev('Kept', 1), ev('Kept', 2)], 'no_stream');
    await store.deleteStreams([stream('gone')]);
    await store.expunge();
    await store.expunge();
    t.same(await store.readStream(stream('gone')), []);
    t.same((await store.readStream(stream('kept'))).map((e) => e.data.n), [1, 2], 'the other stream, whole');
    await store.append(stream('kept'), [ev('Kept', 3)], 1n);
    t.same((await store.readStream(stream('kept'))).map((e) => Number(e.revision)), [0, 1, 2], 'and it takes the next revision');
  });

  t.test('append after delete: a deleted stream refuses every append and stays deleted', async (t) => {
    await store.append(stream('gone'), [ev('Secret', 1), ev('Secret', 2)], 'no_stream');
    await store.deleteStreams([stream('gone'), stream('never')]);
    const attempts: Array<[string, string, 'no_stream' | 'any' | bigint]> = [
      ['as a new stream', 'gone', 'no_stream'],
      ['with any', 'gone', 'any'],
      ['at its old revision', 'gone', 1n],
      ['one deleted before it existed', 'never', 'no_stream'],
    ];
    for (const [name, which, expected] of attempts) {
      const err = await store.append(stream(which), [ev('Again', 3)], expected).catch((e: unknown) => e);
      t.type(err, WrongExpectedRevision, name);
      t.equal((err as WrongExpectedRevision).actual, 'deleted', `${name}: the error says it was deleted`);
    }
    t.same(await store.readStream(stream('gone')), [], 'nothing was appended');
    t.same(await store.readStream(stream('never')), []);
    t.equal(await store.streamState(stream('gone')), 'deleted');
    t.equal(await store.streamState(stream('never')), 'deleted');
    await store.deleteStreams([stream('gone')]);
    t.equal(await store.streamState(stream('gone')), 'deleted', 'deleting it again changes nothing');
  });

  t.test('streamState: the last revision, or no stream', async (t) => {
    t.equal(await store.streamState(stream('missing')), 'no_stream');
    await store.append(stream('two'), [ev('Opened', 1), ev('Changed', 2)], 'no_stream');
    t.equal(await store.streamState(stream('two')), 1n);
  });

  t.test('the end stays at or past every event the store held, deleted ones included', async (t) => {
    const { position } = await store.append(stream('newest'), [ev('Secret', 1)], 'no_stream');
    t.ok((await store.endPosition()) >= position, 'at or past the newest event');
    t.ok((await store.endPosition()) >= (await store.headPosition()), 'at or past the head');
    await store.deleteStreams([stream('newest')]);
    t.ok((await store.endPosition()) >= position, 'deleting the newest event does not move it back');
  });

  t.test('an append over the maximum append size is refused whole, one under it is taken', async (t) => {
    const big = (bytes: number) => ({ type: 'Big', data: { text: 'x'.repeat(bytes) }, metadata: {} });
    const over = [ev('Small', 1), big(MAX_APPEND_BYTES)];
    const err = await store.append(stream('big'), over, 'no_stream').catch((e: unknown) => e);
    t.type(err, AppendTooLarge);
    t.ok((err as AppendTooLarge).limit < appendSize(over), 'the error names a limit the append exceeds');
    t.equal(await store.streamState(stream('big')), 'no_stream', 'nothing was appended');
    const under = [big(MAX_APPEND_BYTES - 1000)];
    t.ok(appendSize(under) <= MAX_APPEND_BYTES);
    t.equal((await store.append(stream('big'), under, 'no_stream')).nextRevision, 0n);
  });

  t.test('a checkpoint past the head: the projections and the erasure process halt at start-up, applying nothing', async (t) => {
    await store.append(stream('some'), [ev('Opened', 1)], 'no_stream');
    // Read models built from another, longer store: their checkpoints are past everything this one ever held.
    const dir = mkdtempSync(join(tmpdir(), 'read-models-'));
    const readModels = openSqliteReadModels(dir);
    t.teardown(async () => {
      await readModels.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const past = (await store.endPosition()) + 1_000_000n;
    const names = [...projections.map(checkpointKey), checkpointKey(erasureState)];
    t.ok(await readModels.write([], names.map((name) => ({ name, expected: 0n, next: past }))));
    const silent = pino({ level: 'silent' });
    const runner = new ProjectionRunner(store, readModels, catalog, projections, silent);
    await runner.init();
    t.match(runner.halted, { cause: 'event_store_changed', position: 0n, reason: new RegExp(`up to position ${past}, past the end of this event store`) });
    t.equal(await runner.waitFor(past + 1n, 2 ** 31 - 1), false, 'a wait for what comes next answers at once');
    t.equal(await runner.catchUp(), 0, 'nothing is applied');
    const erasure = new ErasureProcess(store, readModels, catalog, () => new Date(), silent);
    await erasure.init();
    t.match(erasure.halted, { cause: 'event_store_changed' });
    t.equal(await erasure.reach(past + 1n, 2 ** 31 - 1), false);
    t.same([...(await readModels.checkpoints()).values()], names.map(() => past), 'no checkpoint moved');
  });
}
