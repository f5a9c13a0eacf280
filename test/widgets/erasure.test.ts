import t, { type Test } from 'tap';
import type { App } from '../../src/app.js';
import type { Services } from '../../src/services.js';
import { owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { silent, snapshotReadModels, testServices } from '../support/services.js';
import { buildApp } from '../../src/app.js';
import { catalog } from '../../src/domain-events.js';
import { ErasureProcess } from '../../src/erasure/process.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

async function respond(app: App, widget: string, secret: string): Promise<string> {
  const token = await tokenFor(app, 'widgets', widget);
  const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 2, comment: secret }, _token: token } });
  return reply.json().id;
}

/** Every event in the store, as the text an auditor's export would hold. */
async function wholeStore(services: Services): Promise<string> {
  return JSON.stringify(await services.events.readAll({ after: 0n, limit: 1_000_000 }), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
}

const list = async (app: App, who: Owner, widget: string) =>
  (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: who.headers })).json().responses.map((r: { id: string }) => r.id);

t.test('bulk delete erases responses from read models and the event store, leaving an audit event', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const other = await owner(services);
  const widget = await publishedWidget(app, biz);
  const sibling = await publishedWidget(app, biz);
  const theirs = await publishedWidget(app, other);
  const erased = [await respond(app, widget, 'SECRET-ONE'), await respond(app, widget, 'SECRET-TWO')];
  const kept = await respond(app, widget, 'kept-answer');
  const onSibling = await respond(app, sibling, 'sibling-answer');
  const onTheirs = await respond(app, theirs, 'their-answer');
  t.match(await wholeStore(services), /SECRET-ONE/, 'the answers are in the store before');

  const del = (who: Owner, payload: object) => app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload });
  const reply = await del(biz, { ids: [...erased, onSibling, onTheirs, 'rsp_unknown', erased[0]], widgetId: widget });
  t.equal(reply.statusCode, 200);
  t.match(reply.json(), { success: true, deleted: 2, erasure_id: /^ers_/ }, 'only ids of that widget count, each once');

  t.same(await list(app, biz, widget), [kept], 'gone from the responses list at once');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().pagination.total, 1, 'and from the total');
  t.same(await list(app, biz, sibling), [onSibling], "another widget's response is left alone");
  t.same(await list(app, other, theirs), [onTheirs], "another account's response is left alone");
  const store = await wholeStore(services);
  t.notMatch(store, /SECRET-ONE|SECRET-TWO/, 'no trace of the erased answers in the event store');
  for (const id of erased) t.same(await services.events.readStream(`response-${id}`), [], `stream of ${id} deleted`);

  const audit = await services.events.readStream(`erasure-${reply.json().erasure_id}`);
  t.match(audit.map((e) => e.type), ['ErasureRequested', 'ResponsesErased'], 'the request, then what it erased');
  t.match(audit[1], { type: 'ResponsesErased', data: { parent: 'widget', parent_id: widget, response_ids: erased, reason: 'bulk_delete', key_id: biz.keyId, erased_at: String } });
  t.notMatch(JSON.stringify(audit.map((e) => e.data)), /SECRET/, 'the audit event holds ids, never content');

  const before = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(await snapshotReadModels(services), before, 'a rebuild does not bring them back');

  t.match((await del(other, { ids: [kept], widgetId: widget })).json(), D3(404, 'widget_not_found'), "another account's widget");
  t.same(await list(app, biz, widget), [kept], 'and nothing changed');
  const invalid: Array<[string, object]> = [
    ['two parents', { ids: [kept], widgetId: widget, formId: 'frm_x' }],
    ['no parent', { ids: [kept] }],
    ['no ids', { ids: [], widgetId: widget }],
    ['ids not a list', { ids: kept, widgetId: widget }],
    ['1001 ids', { ids: Array.from({ length: 1001 }, (_, i) => `rsp_${i}`), widgetId: widget }],
    ['unknown key', { ids: [kept], widgetId: widget, everything: true }],
    ['operator as id', { ids: [{ $ne: null }], widgetId: widget }],
  ];
  for (const [name, payload] of invalid) t.match((await del(biz, payload)).json(), D3(400, 'validation_error'), name);
  const readOnly = await owner(services, 'business', ['forms:read', 'responses:read']);
  t.match((await del(readOnly, { ids: [kept], widgetId: widget })).json(), D3(403, 'insufficient_scope'));
  t.same(await list(app, biz, widget), [kept], 'no refused request erased anything');
});

t.test('deleting a widget erases every response it had', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const kept = await publishedWidget(app, biz);
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push(await respond(app, widget, `DOOMED-${i}`));
  await respond(app, kept, 'survivor');
  t.same((await app.inject({ method: 'DELETE', url: `/api/widgets/${widget}`, headers: biz.headers })).json(), { success: true });
  const store = await wholeStore(services);
  t.notMatch(store, /DOOMED/, 'no answer of the deleted widget remains in the event store');
  t.match(store, /survivor/);
  const audit = await services.events.readStream(`erasure-widget-${widget}`);
  t.equal(audit.length, 1);
  t.match(audit[0], { data: { parent: 'widget', parent_id: widget, reason: 'parent_deleted', key_id: biz.keyId } });
  t.same([...(audit[0]!.data.response_ids as string[])].sort(), [...ids].sort());
  t.equal((await services.readModels.count('responses', { widget_id: widget })), 0);
  const before = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(await snapshotReadModels(services), before, 'rebuild agrees');
});

/**
 * A published widget and poll of a Business owner, with tokens, on a store
 * whose appends of a response or a vote first run the deletion given to
 * `deletingFirst`: the deletion runs to its end between the answer's
 * checks and its append (with `after`, right after its append). `atomic:
 * false` gives the store KurrentDB's semantics (appends not atomic across
 * streams, so carrying no condition).
 */
async function racingDeletion(t: Test, { atomic = true, after = false } = {}) {
  const { app, services } = await testApp(t);
  if (!atomic) Object.defineProperty(services.events, 'atomicAcrossStreams', { value: false });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const pollId = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Which?', options: [{ text: 'LATE-OPTION' }, { text: 'B' }] } })).json().id;
  await app.inject({ method: 'PUT', url: `/api/polls/${pollId}`, headers: biz.headers, payload: { published: true } });
  const option = (await app.inject({ method: 'GET', url: `/api/polls/${pollId}` })).json().options[0].id;
  const tokens = { widget: await tokenFor(app, 'widgets', widget), poll: await tokenFor(app, 'polls', pollId) };
  const events = services.events as { appendToStreams: Services['events']['appendToStreams'] };
  const appendToStreams = services.events.appendToStreams.bind(services.events);
  let deleteFirst: (() => Promise<unknown>) | undefined;
  let deleting: Promise<unknown> = Promise.resolve();
  t.teardown(() => deleting);
  events.appendToStreams = async (parts) => {
    const run = deleteFirst;
    if (!run || !parts.some((part) => part.events.some((e) => e.type === 'ResponseSubmitted' || e.type === 'VoteCast'))) return appendToStreams(parts);
    deleteFirst = undefined;
    if (!after) {
      await run();
      return appendToStreams(parts);
    }
    // The deletion is recorded right after the append, and its erasure left to run on: the DELETE's reply, which waits for it, is not awaited here.
    const appended = await appendToStreams(parts);
    deleting = run();
    while ((await services.events.headPosition()) <= appended.position) await new Promise((resolve) => setTimeout(resolve, 1));
    return appended;
  };
  /** Answers `answer()`, having armed the deletion of `object` to run before its append. */
  const deletingFirst = <T>(object: string, answer: () => Promise<T>): Promise<T> => {
    deleteFirst = () => app.inject({ method: 'DELETE', url: object, headers: biz.headers });
    return answer();
  };
  return { app, services, widget, pollId, option, tokens, deletingFirst, ran: () => deleteFirst === undefined };
}

t.test('a submission or a vote racing its parent\'s deletion is refused at its append: nothing of it is stored, nothing is left to erase', async (t) => {
  const { app, services, widget, pollId, option, tokens, deletingFirst, ran } = await racingDeletion(t);

  const late = await deletingFirst(`/api/widgets/${widget}`, () =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1, comment: 'LATE-ANSWER' }, _token: tokens.widget } }),
  );
  t.match(late.json(), D3(404, 'widget_not_found'), 'the submitter learns the widget is gone');
  t.ok(ran(), 'the deletion ran in between');
  t.equal((await services.events.readAll({ after: 0n, limit: 1_000_000 })).filter((e) => e.type === 'ResponseSubmitted').length, 0, 'the store refused the response: its append held the condition that the widget was as decided');

  const vote = await deletingFirst(`/api/polls/${pollId}`, () => app.inject({ method: 'POST', url: `/api/polls/${pollId}/vote`, payload: { option_ids: [option], _token: tokens.poll } }));
  t.match(vote.json(), D3(404, 'poll_not_found'));
  t.ok(ran(), 'that deletion ran in between too');

  const store = await wholeStore(services);
  t.notMatch(store, /LATE-ANSWER/, 'the late response left the event store');
  t.notMatch(store, /"VoteCast"/, 'so did the late vote');
  const audit = (await services.events.readAll({ after: 0n, limit: 1_000_000 })).filter((e) => e.type === 'ResponsesErased');
  t.same(audit.filter((e) => e.metadata.actor === 'service'), [], 'no erasure by the service: neither was stored');
  t.equal(await services.readModels.count('responses', { widget_id: widget }), 0);
  t.equal(await services.readModels.count('poll_voters', { poll_id: pollId }), 0);
});

for (const after of [false, true]) {
  const when = after ? 'just before its parent\'s deletion is erased with the rest' : 'after its parent\'s deletion is erased as a late answer';
  t.test(`where appends are not atomic across streams, a submission or vote stored ${when} before its 404`, async (t) => {
    // KurrentDB's semantics: the append carries no condition on the object's stream, so it lands.
    const { app, services, widget, pollId, option, tokens, deletingFirst, ran } = await racingDeletion(t, { atomic: false, after });

    const late = await deletingFirst(`/api/widgets/${widget}`, () =>
      app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1, comment: 'STORED-ANSWER' }, _token: tokens.widget } }),
    );
    t.match(late.json(), D3(404, 'widget_not_found'));
    t.ok(ran(), after ? 'the deletion was recorded right after the append' : 'the deletion ran in between');
    const erased = (await services.events.readAll({ after: 0n, limit: 1_000_000 })).filter((e) => e.type === 'ResponsesErased' && e.streamId.startsWith('erasure-late-'));
    t.equal(erased.length, after ? 0 : 1, after ? 'erased with the widget\'s answers' : 'the erasure process erased the late response');
    t.notMatch(await wholeStore(services), /STORED-ANSWER/, 'its answers are gone from the event store when the 404 is sent');
    t.equal(await services.readModels.count('responses', { widget_id: widget }), 0, 'and from the read models');

    const vote = await deletingFirst(`/api/polls/${pollId}`, () => app.inject({ method: 'POST', url: `/api/polls/${pollId}/vote`, payload: { option_ids: [option], _token: tokens.poll } }));
    t.match(vote.json(), D3(404, 'poll_not_found'));
    t.equal(await services.readModels.count('poll_voters', { poll_id: pollId }), 0, 'the vote is erased before its 404 too');
  });
}

t.test('an erasure that outlasts the wait answers 202 and finishes in the background', async (t) => {
  const { app, services } = await testApp(t, { erasureWaitMs: 20 });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const bulk = await publishedWidget(app, biz);
  const ids = [await respond(app, widget, 'SLOW-ONE'), await respond(app, widget, 'SLOW-TWO')];
  const bulkIds = [await respond(app, bulk, 'SLOW-THREE')];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const events = services.events as { deleteStreams: Services['events']['deleteStreams'] };
  const deleteStreams = services.events.deleteStreams.bind(services.events);
  events.deleteStreams = async (streams) => {
    await held;
    return deleteStreams(streams);
  };

  const reply = await app.inject({ method: 'DELETE', url: `/api/widgets/${widget}`, headers: biz.headers });
  t.equal(reply.statusCode, 202);
  t.same(reply.json(), { success: true, pending: true });
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${widget}`, headers: biz.headers })).json(), D3(404, 'widget_not_found'), 'the widget is gone at once');
  const bulkReply = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: bulkIds, widgetId: bulk } });
  t.equal(bulkReply.statusCode, 202);
  t.match(bulkReply.json(), { success: true, pending: true, erasure_id: /^ers_/ });
  // Each response's key goes first, so its answers cannot be read from that moment; the
  // bytes go with the stream deletion the store holds up, and the erasure is recorded after it.
  t.notMatch(await wholeStore(services), /SLOW-ONE|SLOW-TWO/, 'the deleted widget\'s answers cannot be read at once');
  t.same((await services.events.readStream(`erasure-${bulkReply.json().erasure_id}`)).map((e) => e.type), ['ErasureRequested'], 'not finished while the store is held');

  release();
  t.ok(await services.erasure.reach(await services.events.headPosition(), 5_000), 'the erasure finishes once the store answers');
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  t.notMatch(await wholeStore(services), /SLOW-/, 'with nobody waiting for it');
  t.same((await services.events.readStream(`erasure-widget-${widget}`)).flatMap((e) => e.data.response_ids as string[]).sort(), [...ids].sort());
  t.same((await services.events.readStream(`erasure-${bulkReply.json().erasure_id}`)).map((e) => e.type), ['ErasureRequested', 'ResponsesErased']);
  t.same(await list(app, biz, bulk), [], 'and the read models drop them');
});

t.test('an erasure cut off halfway through its deletion is finished by the next process, recorded once, from the event store', async (t) => {
  const services = await testServices(t);
  const app = await buildApp(services);
  t.teardown(() => app.close());
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await respond(app, widget, `HALF-${i}`));
  // The API's read models lag behind: the erasure must not need them.
  await services.readModels.write([{ op: 'delete', collection: 'responses', where: { widget_id: widget } }]);

  const events = services.events as { deleteStreams: Services['events']['deleteStreams'] };
  const deleteStreams = services.events.deleteStreams.bind(services.events);
  events.deleteStreams = async (streams) => {
    await deleteStreams(streams.slice(0, 1));
    throw new Error('the process died here');
  };
  const cutOff = new ErasureProcess(services.events, services.readModels, catalog, services.clock, silent);
  await cutOff.init();
  await services.events.append(`widget-${widget}`, [catalog.serialize({ type: 'WidgetDeleted', data: { widget_id: widget, account_id: biz.accountId, deleted_at: new Date().toISOString() } }, { occurred_at: new Date().toISOString(), actor: biz.keyId })], 'any');
  await t.rejects(cutOff.catchUp(), /died here/);
  t.match(await wholeStore(services), /HALF-/, 'some answers are left');
  const recorded = await services.events.readStream(`erasure-widget-${widget}`);
  t.same(recorded.flatMap((e) => e.data.response_ids as string[]).sort(), [...ids].sort(), 'the erasure was recorded before anything was deleted, naming every response');

  events.deleteStreams = deleteStreams;
  const next = new ErasureProcess(services.events, services.readModels, catalog, services.clock, silent);
  await next.init();
  await next.catchUp();
  await next.catchUp();
  t.notMatch(await wholeStore(services), /HALF-/, 'the next process erased them all');
  const audit = await services.events.readStream(`erasure-widget-${widget}`);
  t.equal(audit.length, 1, 'and recorded it once');
  t.same([...(audit[0]!.data.response_ids as string[])].sort(), [...ids].sort());
  t.equal(audit[0]!.metadata.actor, biz.keyId, 'on behalf of the key that deleted the widget');
});

t.test('the erasure process stops before an event it cannot read, and erases nothing past it', async (t) => {
  const services = await testServices(t);
  const app = await buildApp(services);
  t.teardown(() => app.close());
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  await respond(app, widget, 'BEHIND-THE-HALT');
  const { position } = await services.events.append('widget-wgt_from_the_future', [{ type: 'WidgetCreated', data: { widget_id: 'wgt_from_the_future' }, metadata: { schema_version: 99, occurred_at: new Date().toISOString(), actor: 'cli' } }], 'no_stream');
  await services.events.append(`widget-${widget}`, [catalog.serialize({ type: 'WidgetDeleted', data: { widget_id: widget, account_id: biz.accountId, deleted_at: new Date().toISOString() } }, { occurred_at: new Date().toISOString(), actor: biz.keyId })], 'any');

  const process = new ErasureProcess(services.events, services.readModels, catalog, services.clock, silent);
  await process.init();
  await process.catchUp();
  t.match(process.halted, { position, streamId: 'widget-wgt_from_the_future', type: 'WidgetCreated' }, 'halted at the unreadable event');
  t.equal(process.position, position - 1n, 'with everything before it handled');
  t.equal(await process.reach(position + 1n, 5_000), false, 'a wait past it is answered at once');
  t.match(await wholeStore(services), /BEHIND-THE-HALT/, 'the deletion after it is not carried out, nor skipped');
  const restarted = new ErasureProcess(services.events, services.readModels, catalog, services.clock, silent);
  await restarted.init();
  t.equal(restarted.position, position - 1n, 'the next start resumes right before it');
});
