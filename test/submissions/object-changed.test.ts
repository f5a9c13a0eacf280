import t from 'tap';
import type { Services } from '../../src/services.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

/** Runs `first` (once) right before the store is asked to append a response (or a vote), after the decision. */
function beforeResponseAppend(services: Services, type = 'ResponseSubmitted') {
  const events = services.events as { appendToStreams: Services['events']['appendToStreams'] };
  const appendToStreams = services.events.appendToStreams.bind(services.events);
  const hook = { first: undefined as (() => Promise<unknown>) | undefined, appends: 0 };
  events.appendToStreams = async (parts) => {
    if (parts.some((part) => part.events.some((e) => e.type === type))) {
      hook.appends++;
      const run = hook.first;
      hook.first = undefined;
      if (run) await run();
    }
    return appendToStreams(parts);
  };
  return hook;
}

t.test('a submission reads nothing of its widget\'s stream while this process keeps the widget\'s state', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const submit = async () => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5 }, _token: await tokenFor(app, 'widgets', widget) } });
  t.equal((await submit()).statusCode, 200);
  const reads: string[] = [];
  const readStream = services.events.readStream.bind(services.events);
  (services.events as { readStream: Services['events']['readStream'] }).readStream = (streamId, options) => {
    reads.push(streamId);
    return readStream(streamId, options);
  };
  t.equal((await submit()).statusCode, 200);
  t.same(reads.filter((stream) => stream.includes(widget)), [], 'the store checks the widget at the append instead');
});

t.test('a widget unpublished between a submission\'s decision and its append: the store refuses the append, the visitor is told, nothing is stored', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const submit = async (comment: string) => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5, comment }, _token: await tokenFor(app, 'widgets', widget) } });
  t.equal((await submit('before')).statusCode, 200, 'this process now keeps the widget as published');
  const hook = beforeResponseAppend(services);
  hook.first = () => app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { published: false } });
  const late = await submit('LATE');
  t.match(late.json(), D3(403, 'widget_not_published'), 'decided again on the stored widget');
  t.equal(hook.first, undefined, 'the change landed between the decision and the append');
  t.equal(hook.appends, 1, 'one append asked for, refused; the stored state refused before any other');
  const stored = (await services.events.readAll({ after: 0n, limit: 10_000 })).filter((e) => e.type === 'ResponseSubmitted');
  t.equal(stored.length, 1, 'only the response from before');
  t.notMatch(stored.map((e) => JSON.stringify(e.data)).join(), /LATE/);
});

t.test('a widget changed but still open between a submission\'s decision and its append: decided again and stored once', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const submit = async (comment: string) => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5, comment }, _token: await tokenFor(app, 'widgets', widget) } });
  t.equal((await submit('before')).statusCode, 200);
  const hook = beforeResponseAppend(services);
  hook.first = () => app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { title: 'Renamed meanwhile' } });
  const again = await submit('AGAIN');
  t.equal(again.statusCode, 200, again.body);
  t.equal(hook.appends, 2, 'refused once at the store, then stored');
  const stored = (await services.events.readAll({ after: 0n, limit: 10_000 })).filter((e) => e.type === 'ResponseSubmitted' && JSON.stringify(e.data).includes('AGAIN'));
  t.equal(stored.length, 1, 'once');
  t.equal((stored[0]!.data as { response_id: string }).response_id, again.json().id);
});

t.test('a poll closed between a vote\'s decision and its append: the store refuses the append, the visitor is told, nothing is stored', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const created = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Which?', options: [{ text: 'A' }, { text: 'B' }] } })).json();
  await app.inject({ method: 'PUT', url: `/api/polls/${created.id}`, headers: biz.headers, payload: { published: true } });
  const vote = async (fingerprint: string) =>
    app.inject({ method: 'POST', url: `/api/polls/${created.id}/vote`, payload: { option_ids: [created.options[0].id], _token: await tokenFor(app, 'polls', created.id), metadata: { fingerprint } } });
  t.equal((await vote('first')).statusCode, 200, 'this process now keeps the poll as open');
  const hook = beforeResponseAppend(services, 'VoteCast');
  hook.first = () => app.inject({ method: 'PUT', url: `/api/polls/${created.id}`, headers: biz.headers, payload: { settings: { closes_at: '2020-01-01T00:00:00Z' } } });
  const late = await vote('second');
  t.match(late.json(), D3(403, 'poll_closed'), 'decided again on the stored poll');
  t.equal(hook.first, undefined, 'the change landed between the decision and the append');
  t.equal(hook.appends, 1, 'one append asked for, refused');
  t.equal((await services.events.readAll({ after: 0n, limit: 10_000 })).filter((e) => e.type === 'VoteCast').length, 1, 'only the vote from before');
});
