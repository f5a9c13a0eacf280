/**
 * kill -9 while a widget with 2,000 responses is being deleted, early, midway
 * or late in its erasure (0, 15 and 35 ms after it starts): once the server is back, every response of that
 * widget leaves the event store and the read models within 10 s, with no
 * further request.
 */
import t from 'tap';
import { buildApp } from '../../src/app.js';
import type { NewEvent } from '../../src/infra/event-store/port.js';
import type { Services } from '../../src/services.js';
import { owner, publishedWidget, tokenFor } from '../support/app.js';
import { startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';

const RESPONSES = 2_000;
const ROUNDS = 3;
const SECRET = 'erasure-crash-test-secret-0123456789abcdef';

/** The widget's responses still in the event store and in the read models. */
async function leftOf(services: Services, widget: string): Promise<{ events: number; rows: number; deleted: boolean }> {
  const feed = await services.events.readAll({ after: 0n, limit: 10_000_000 });
  return {
    events: feed.filter((e) => e.type === 'ResponseSubmitted' && e.data.widget_id === widget).length,
    rows: await services.readModels.count('responses', { widget_id: widget }),
    deleted: feed.some((e) => e.type === 'WidgetDeleted' && e.data.widget_id === widget),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a deletion killed early, midway or late in its erasure finishes after restart, unasked', async (t) => {
  const dir = tempDir(t);
  const env = { DATA_DIR: dir, SECRET, LOG_LEVEL: 'silent' };
  const services = await testServices(t, { dataDir: dir, env: { SECRET } });
  const app = await buildApp(services);
  const biz = await owner(services);
  const widgets: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const widget = await publishedWidget(app, biz);
    // One real submission, then its event copied under new ids: what 2,000 visitors would have left.
    const sent = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 4, comment: 'first' }, _token: await tokenFor(app, 'widgets', widget) } });
    const [template] = await services.events.readStream(`response-${sent.json().id}`);
    const copies = Array.from({ length: RESPONSES - 1 }, (_, i) => {
      const id = `rsp_copy${round}x${i}`;
      const event: NewEvent = { type: 'ResponseSubmitted', data: { ...template!.data, response_id: id, answers: { rating: 3, comment: `copy ${i}` } }, metadata: template!.metadata };
      return services.events.append(`response-${id}`, [event], 'no_stream');
    });
    await Promise.all(copies);
    widgets.push(widget);
  }
  await services.projections.catchUp();
  await services.erasure.catchUp();
  await app.close();
  for (const widget of widgets) t.same(await leftOf(services, widget), { events: RESPONSES, rows: RESPONSES, deleted: false }, `${widget} starts with every response`);

  for (const [round, widget] of widgets.entries()) {
    const server = await startServer(env);
    const deletion = fetch(`${server.url}/api/widgets/${widget}`, { method: 'DELETE', headers: biz.headers }).catch(() => 'killed');
    // The erasure starts once the deletion is recorded; the kill lands somewhere in it.
    while (!(await leftOf(services, widget)).deleted) await sleep(2);
    // Early, middle and late in it, the same each run, so a failing round can be run again as it was.
    await sleep([0, 15, 35][round % 3]!);
    const killedWith = await leftOf(services, widget);
    await server.stop('SIGKILL');
    await deletion;
    t.comment(`round ${round}: killed with ${killedWith.events} response events and ${killedWith.rows} rows left`);

    const restarted = await startServer(env);
    const deadline = Date.now() + 10_000;
    let left = await leftOf(services, widget);
    while ((left.events > 0 || left.rows > 0) && Date.now() < deadline) {
      await sleep(100);
      left = await leftOf(services, widget);
    }
    t.same(left, { events: 0, rows: 0, deleted: true }, `round ${round}: every response is gone within 10 s of the restart`);
    const erased = (await services.events.readStream(`erasure-widget-${widget}`)).flatMap((e) => e.data.response_ids as string[]);
    t.equal(new Set(erased).size, RESPONSES, `round ${round}: the audit names each of the ${RESPONSES} responses`);
    t.equal(erased.length, RESPONSES, `round ${round}: and each once, however often the erasure ran`);
    await restarted.stop();
  }
  for (const widget of widgets) t.equal((await leftOf(services, widget)).events, 0);
});
