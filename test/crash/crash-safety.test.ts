/**
 * kill -9 at the worst moments: every acknowledged submission survives once,
 * read models equal a rebuild from zero, poll totals equal the vote events.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t, { type Test } from 'tap';
import { catalog } from '../../src/domain-events.js';
import { checkpointKey } from '../../projections/projection.js';
import { responsesProjection } from '../../projections/responses.js';
import { buildApp } from '../../src/http/app.js';
import type { Services } from '../../src/services.js';
import { owner } from '../support/app.js';
import { childEnv, startServer } from '../support/processes.js';
import { snapshotReadModels, tempDir, testServices } from '../support/services.js';

const PROJECTOR = new URL('../support/projector.ts', import.meta.url).pathname;

async function assertConsistent(t: Test, services: Services, acked: { responses: string[]; votes: number }, widget: string, poll: string) {
  await services.projections.catchUp();
  const responses = await services.readModels.find('responses', { widget_id: widget }, {});
  const ids = responses.map((r) => r.id);
  t.equal(new Set(ids).size, ids.length, 'no response twice');
  const missing = acked.responses.filter((id) => !ids.includes(id));
  t.same(missing, [], `all ${acked.responses.length} acknowledged responses are there`);
  const events = await services.events.readAll({ after: 0n, limit: 1_000_000 });
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
  while (acked.responses.length < 120) await new Promise((resolve) => setTimeout(resolve, 10));
  await server.stop('SIGKILL');
  killed = true;
  await Promise.all(workers);
  t.ok(acked.responses.length >= 120);

  const restarted = await startServer({ DATA_DIR: dir });
  t.equal((await fetch(`${restarted.url}/readyz`)).status, 200, 'the server starts again after kill -9');
  await restarted.stop();
  const services = await testServices(t, { dataDir: dir });
  await assertConsistent(t, services, acked, widget, poll);
});

t.test('kill -9 of a projection in the middle of applying a batch', async (t) => {
  const dir = tempDir(t);
  let widget = '';
  {
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services);
    widget = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'Many' } })).json().id;
    await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { published: true } });
    await app.close();
    // Many events the read models have not seen: append them straight to the store.
    for (let i = 0; i < 20_000; i++) {
      await services.events.append(`response-crash${i}`, [catalog.serialize({ type: 'ResponseSubmitted', data: { response_id: `crash${i}`, account_id: biz.accountId, widget_id: widget, answers: { rating: 1 + (i % 5) }, metadata: { browser: null, browser_version: null, device: null, os: null, ip_hash: 'h', language: null, completion_time_ms: 1, page_url: null, page_title: null }, submitted_at: new Date(1_800_000_000_000 + i).toISOString() } }, { occurred_at: new Date().toISOString(), actor: 'test' })], 'no_stream');
    }
    await services.close();
  }
  for (const delayMs of [5, 40, 120]) {
    const child = spawn(process.execPath, [PROJECTOR, dir], { env: childEnv({}), stdio: ['ignore', 'pipe', 'inherit'] });
    for await (const line of createInterface({ input: child.stdout! })) if (line === 'applying') break;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  const services = await testServices(t, { dataDir: dir });
  // Atomicity: what a killed projection left is exactly what its checkpoint says it applied.
  const checkpoint = (await services.readModels.checkpoints()).get(checkpointKey(responsesProjection)) ?? 0n;
  const applied = (await services.events.readAll({ after: 0n, limit: 1_000_000 })).filter((e) => e.type === 'ResponseSubmitted' && e.position <= checkpoint).length;
  const partial = await services.readModels.count('responses', { widget_id: widget });
  t.equal(partial, applied, `the killed projections left ${partial} responses, exactly those up to their checkpoint`);
  t.ok(partial < 20_000, 'and they were killed before the end');
  await assertConsistent(t, services, { responses: [], votes: 0 }, widget, 'pol_none');
  t.equal(await services.readModels.count('responses', { widget_id: widget }), 20_000, 'every event applied exactly once in the end');
});
