import t from 'tap';
import { changePlan } from '../../src/accounts/commands.js';
import type { App } from '../../src/app.js';
import { owner, testApp, tokenFor, type Owner } from '../support/app.js';

/**
 * A refused duplicate never takes a `max_responses` slot: six submissions of
 * one visitor arriving at once to an object that takes three and one per
 * visitor leave it open with one taken, for two other visitors to take.
 */

type Kind = 'widgets' | 'forms' | 'polls';
const settings = { max_responses: 3, prevent_duplicates: true, network_limit_per_hour: 3 };

async function publishedObject(app: App, who: Owner, kind: Kind): Promise<{ id: string; payload: (token: string, fingerprint: string) => object }> {
  const body = {
    widgets: { widget_type: 'feedback', title: 'Rate us', settings },
    forms: { title: 'Sign up', questions: [{ id: 'name', type: 'short_text', title: 'Name', required: true }], settings },
    polls: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }], settings },
  }[kind];
  const created = await app.inject({ method: 'POST', url: `/api/${kind}`, headers: who.headers, payload: body });
  if (created.statusCode !== 201) throw new Error(created.body);
  const { id, options } = created.json() as { id: string; options?: Array<{ id: string }> };
  const published = await app.inject({ method: 'PUT', url: `/api/${kind}/${id}`, headers: who.headers, payload: { published: true } });
  if (published.statusCode !== 200) throw new Error(published.body);
  const payload = (token: string, fingerprint: string) =>
    kind === 'polls'
      ? { option_ids: [options![0]!.id], _token: token, metadata: { fingerprint } }
      : { answers: kind === 'widgets' ? { rating: 4 } : { name: 'Ann' }, _token: token, metadata: { fingerprint } };
  return { id, payload };
}

for (const kind of ['widgets', 'forms', 'polls'] as const) {
  t.test(`${kind}: six simultaneous submissions of one visitor take one slot of three, and two other visitors take the rest`, async (t) => {
    const { app, services } = await testApp(t);
    const biz = await owner(services);
    const { id, payload } = await publishedObject(app, biz, kind);
    const token = await tokenFor(app, kind, id);
    const action = kind === 'polls' ? 'vote' : 'submit';
    // Each visitor on an address of their own, so only the fingerprint guard and the slots are at stake here.
    const send = (fingerprint: string, remoteAddress: string) =>
      app.inject({ method: 'POST', url: `/api/${kind}/${id}/${action}`, remoteAddress, payload: payload(token, fingerprint) });

    const replies = await Promise.all(Array.from({ length: 6 }, () => send('same-visitor', '203.0.113.1')));
    const statuses = replies.map((reply) => reply.statusCode).sort();
    t.same(statuses, [200, 409, 409, 409, 409, 409], 'one accepted, five refused as duplicates');
    for (const reply of replies.filter((r) => r.statusCode === 409)) t.equal(reply.json().code, 'duplicate_submission');

    const read = (await app.inject({ method: 'GET', url: `/api/${kind}/${id}` })).json();
    t.equal(read.closed, false, 'still open');
    const slots = await services.events.readStream(`quota-${kind.slice(0, -1)}-${id}`);
    t.equal(slots.length, 1, 'one slot of three taken');

    t.equal((await send('second-visitor', '203.0.113.2')).statusCode, 200, 'a second visitor is accepted');
    t.equal((await send('third-visitor', '203.0.113.3')).statusCode, 200, 'a third visitor is accepted');
    const fourth = await send('fourth-visitor', '203.0.113.4');
    t.equal(fourth.statusCode, 403, 'then the object is full');
    t.equal(fourth.json().code, `${kind.slice(0, -1)}_closed`);
    if (kind === 'polls') t.equal((await app.inject({ method: 'GET', url: `/api/polls/${id}/results` })).json().total_votes, 3);
    else t.equal((await app.inject({ method: 'GET', url: `/api/${kind}/${id}/responses`, headers: biz.headers })).json().pagination.total, 3);
  });
}

t.test('prevent_duplicates holds on every plan: a Free owner\'s form takes one response per fingerprint', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const { id, payload } = await publishedObject(app, biz, 'forms');
  // Made on Business (the API needs it), answered on Free.
  await changePlan(services, biz.accountId, 'free');
  const token = await tokenFor(app, 'forms', id);
  const send = () => app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, payload: payload(token, 'free-visitor') });
  t.equal((await send()).statusCode, 200);
  const again = await send();
  t.equal(again.statusCode, 409, 'the same fingerprint again');
  t.equal(again.json().code, 'duplicate_submission');
});

for (const kind of ['widgets', 'polls'] as const) {
  t.test(`${kind}: twelve visitors at once for three slots: three taken, and the nine refused leave no guard, count or slot behind`, async (t) => {
    const { app, services } = await testApp(t);
    const biz = await owner(services);
    const { id, payload } = await publishedObject(app, biz, kind);
    const token = await tokenFor(app, kind, id);
    const action = kind === 'polls' ? 'vote' : 'submit';
    const send = (n: number) => app.inject({ method: 'POST', url: `/api/${kind}/${id}/${action}`, remoteAddress: `203.0.113.${n + 10}`, payload: payload(token, `visitor-${n}`) });
    const head = await services.events.headPosition();
    const replies = await Promise.all(Array.from({ length: 12 }, (_, n) => send(n)));
    const statuses = replies.map((reply) => reply.statusCode).sort();
    t.same(statuses, [200, 200, 200, ...Array<number>(9).fill(403)], 'three accepted, nine told it is closed');
    const types = (await services.events.readAll({ after: head, limit: 100 })).map((event) => event.type);
    const count = (type: string) => types.filter((seen) => seen === type).length;
    t.same(
      [count('SubmissionGuarded'), count('NetworkSubmissionCounted'), count('SubmissionSlotReserved'), count(kind === 'polls' ? 'VoteCast' : 'ResponseSubmitted')],
      [3, 3, 3, 3],
      'the events of the three, and nothing of the nine',
    );
    const refused = replies.findIndex((reply) => reply.statusCode === 403);
    const raised = await app.inject({ method: 'PUT', url: `/api/${kind}/${id}`, headers: biz.headers, payload: { settings: { max_responses: 4, prevent_duplicates: true } } });
    t.equal(raised.statusCode, 200);
    t.equal((await send(refused)).statusCode, 200, 'a refused visitor answers once the owner makes room');
  });
}
