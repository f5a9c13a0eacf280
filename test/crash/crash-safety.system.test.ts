/**
 * kill -9 at the worst moments: every acknowledged submission survives once,
 * read models equal a rebuild from zero, poll totals equal the vote events.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t, { type Test } from 'tap';
import { catalog } from '../../src/domain-events.js';
import { checkpointKey } from '../../src/kernel/feed/projection.js';
import { responsesProjection } from '../../projections/responses.js';
import { widgetsProjection } from '../../projections/widgets.js';
import { buildApp } from '../../src/app.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import type { Services } from '../../src/services.js';
import { owner } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { childEnv, startServer } from '../support/processes.js';
import { snapshotReadModels, tempDir, testServices } from '../support/services.js';

const PROJECTOR = new URL('../support/projector.ts', import.meta.url).pathname;

async function assertConsistent(t: Test, services: Services, acked: { responses: string[]; votes: number }, widget: string, poll: string) {
  await services.projections.catchUp();
  const events = await services.events.readAll({ after: 0n, limit: 1_000_000 });
  const stored = events.filter((e) => e.type === 'ResponseSubmitted' && e.data.widget_id === widget).map((e) => e.data.response_id as string);
  t.equal(new Set(stored).size, stored.length, `${stored.length} responses stored, none twice`);
  t.same(acked.responses.filter((id) => !stored.includes(id)), [], `all ${acked.responses.length} acknowledged responses are among them`);
  const listed = (await services.readModels.find('responses', { widget_id: widget }, {})).map((r) => r.id);
  t.same([...listed].sort(), [...stored].sort(), 'the read model lists exactly the stored responses');
  const votes = events.filter((e) => e.type === 'VoteCast' && e.data.poll_id === poll);
  t.ok(votes.length >= acked.votes, `${votes.length} vote events, ${acked.votes} acknowledged`);
  t.equal(await services.readModels.count('poll_voters', { poll_id: poll }), votes.length, 'poll totals equal the vote events');
  const live = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(await snapshotReadModels(services), live, 'read models equal a rebuild from zero');
}

t.test('kill -9 of the server under a stream of submissions and votes', async (t) => {
  const dir = tempDir(t);
  let widget = '';
  let poll = '';
  let pollOption = '';
  {
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services);
    widget = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'Crash' } })).json().id;
    await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { published: true } });
    const created = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Q?', options: [{ text: 'A' }, { text: 'B' }] } })).json();
    poll = created.id;
    pollOption = created.options[0].id;
    await app.inject({ method: 'PUT', url: `/api/polls/${poll}`, headers: biz.headers, payload: { published: true } });
    await app.close();
    await services.close();
  }
  const server = await startServer({ DATA_DIR: dir });
  const token = async (kind: string, id: string) => ((await (await fetch(`${server.url}/api/${kind}/${id}/token`)).json()) as { token: string }).token;
  const widgetToken = await token('widgets', widget);
  const pollToken = await token('polls', poll);
  const acked = { responses: [] as string[], votes: 0 };
  let killed = false;
  const worker = async (n: number) => {
    for (let i = 0; !killed; i++) {
      try {
        const submit = await fetch(`${server.url}/api/widgets/${widget}/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answers: { rating: 1 + (i % 5) }, _token: widgetToken }) });
        if (submit.ok) acked.responses.push(((await submit.json()) as { id: string }).id);
        const vote = await fetch(`${server.url}/api/polls/${poll}/vote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ option_ids: [pollOption], _token: pollToken, metadata: { fingerprint: `w${n}-${i}` } }) });
        if (vote.ok) acked.votes++;
      } catch {
        return; // the server is gone
      }
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  t.ok(await eventually(() => acked.responses.length >= 120, { everyMs: 5 }), 'submissions are acknowledged under load');
  await server.stop('SIGKILL');
  killed = true;
  await Promise.all(workers);
  t.ok(acked.responses.length >= 120, `${acked.responses.length} responses acknowledged before the kill`);

  const restarted = await startServer({ DATA_DIR: dir });
  // Ready once it has caught up with what the killed server left unprojected.
  t.ok(await eventually(async () => (await fetch(`${restarted.url}/readyz`)).status === 200), 'the server starts again after kill -9 and becomes ready');
  t.equal((await restarted.stop()).code, 0, 'and stops cleanly');
  const services = await testServices(t, { dataDir: dir });
  await assertConsistent(t, services, acked, widget, poll);
});

/** Reads the shared SQLite file from this process, as another process on it would. */
async function readState(dir: string, widget: string) {
  const readModels = openSqliteReadModels(dir);
  const events = openSqliteEventStore(dir);
  try {
    const checkpoints = await readModels.checkpoints();
    const feed = await events.readAll({ after: 0n, limit: 1_000_000 });
    return {
      checkpoints: { responses: checkpoints.get(checkpointKey(responsesProjection)) ?? 0n, widgets: checkpoints.get(checkpointKey(widgetsProjection)) ?? 0n },
      head: feed.at(-1)!.position,
      /** How many events of a type the feed holds up to a position. */
      upTo: (type: string, position: bigint) => feed.filter((e) => e.type === type && e.position <= position).length,
      responses: await readModels.count('responses', { widget_id: widget }),
      slots: Number((await readModels.get('widgets', widget))?.slots_taken),
    };
  } finally {
    await readModels.close();
    await events.close();
  }
}

/** Starts the projector child; answers the position of its first committed batch and the one it was killed while writing. */
async function killDuringSecondBatch(dir: string): Promise<{ committed: bigint; writing: bigint }> {
  const child = spawn(process.execPath, [PROJECTOR, dir], { env: childEnv({}), stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  let committed: bigint | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    const [word, position] = line.split(' ');
    if (word === 'committed' && committed === undefined) committed = BigInt(position!);
    if (word === 'writing' && committed !== undefined) {
      child.kill('SIGKILL');
      await exited;
      return { committed, writing: BigInt(position!) };
    }
    if (word === 'done') break;
  }
  child.kill('SIGKILL');
  await exited;
  throw new Error('the projector ended without reporting a first committed batch and a second one under way (a feed too short, or writes it cannot see)');
}

t.test('kill -9 of a projection in the middle of applying a batch', async (t) => {
  const dir = tempDir(t);
  const RESPONSES = 15_000;
  let widget = '';
  {
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services);
    widget = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'Many' } })).json().id;
    await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { published: true } });
    await app.close();
    // Many events the read models have not seen, appended straight to the store. Each
    // response takes a slot first: slots are counted by increments, which a batch
    // applied twice would count twice.
    const meta = { occurred_at: new Date().toISOString(), actor: 'test' };
    const metadata = { browser: null, browser_version: null, device: null, os: null, ip_hash: 'h', language: null, completion_time_ms: 1, page_url: null, page_title: null };
    for (let from = 0; from < RESPONSES; from += 1000) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, k) => {
          const i = from + k;
          return services.events.append(
            `response-crash${i}`,
            [
              catalog.serialize({ type: 'SubmissionSlotReserved', data: { target: 'widget', target_id: widget, response_id: `crash${i}` } }, meta),
              catalog.serialize({ type: 'ResponseSubmitted', data: { response_id: `crash${i}`, account_id: biz.accountId, widget_id: widget, answers: { rating: 1 + (i % 5) }, metadata, submitted_at: new Date(1_800_000_000_000 + i).toISOString() } }, meta),
            ],
            'no_stream',
          );
        }),
      );
    }
    await services.close();
  }

  const start = await readState(dir, widget);
  t.equal(start.responses, 0, 'the read models start without the new responses');
  let previous = start.checkpoints.responses;
  // Each run commits one or two batches before the kill: two runs stay short of the feed's end.
  for (const run of [1, 2]) {
    const { committed, writing } = await killDuringSecondBatch(dir);
    const state = await readState(dir, widget);
    const checkpoint = state.checkpoints.responses;
    t.ok(checkpoint === committed || checkpoint === writing, `run ${run}: the checkpoint is at a batch boundary (${checkpoint}; first batch ${committed}, killed while writing up to ${writing})`);
    t.ok(checkpoint > previous, `run ${run}: it moved on from ${previous}: the run resumed where the last one stopped and committed a batch`);
    t.ok(checkpoint < state.head, `run ${run}: the kill came before the end of the feed (${state.head})`);
    // Atomicity: what a killed projection left is exactly what its checkpoint says it applied.
    t.equal(state.responses, state.upTo('ResponseSubmitted', checkpoint), `run ${run}: ${state.responses} responses, exactly those up to the checkpoint`);
    t.equal(state.checkpoints.widgets, checkpoint, `run ${run}: the widgets projection committed with it`);
    t.equal(state.slots, state.upTo('SubmissionSlotReserved', state.checkpoints.widgets), `run ${run}: ${state.slots} slots counted, exactly those up to the checkpoint`);
    previous = checkpoint;
  }
  t.ok(previous > start.checkpoints.responses && previous < start.head, 'some but not all of the feed was applied before catching up');

  const services = await testServices(t, { dataDir: dir });
  await services.projections.catchUp();
  const caughtUp = await readState(dir, widget);
  t.equal(caughtUp.checkpoints.responses, caughtUp.head, 'catching up reaches the head');
  t.equal(caughtUp.responses, RESPONSES, 'every response is there once');
  t.equal(caughtUp.slots, RESPONSES, 'every slot counted once: no batch was applied twice');
  const live = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(await snapshotReadModels(services), live, 'read models equal a rebuild from zero');
});
