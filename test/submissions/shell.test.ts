import t, { type Test } from 'tap';
import type { EventStore, ReadStreamOptions } from '../../src/infra/event-store/port.js';
import { castVote } from '../../src/polls/votes.js';
import type { Services } from '../../src/services.js';
import { issueEmbedToken, TOKEN_TTL_SECONDS } from '../../src/embeddables/access.js';
import type { PageSettings as Settings } from '../../src/embeddables/settings.js';
import { submitResponse, type SubmissionInput, type SubmissionTarget } from '../../src/submissions/submit.js';
import { manualClock } from '../support/app.js';
import { testServices } from '../support/services.js';

const settings: Settings = { allowed_domains: [], closes_at: null, max_responses: null, rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null, indexable: false };
const target = (changes: Partial<Settings>): SubmissionTarget => ({
  kind: 'widget',
  id: 'wgt_1',
  accountId: 'acc_1',
  published: true,
  settings: { ...settings, ...changes },
  questions: [{ id: 'rating', type: 'star_rating', title: 'How was it?', required: true, starRatingSettings: { maxStars: 5 } }],
});

/** The store as a read made a moment earlier saw it: streams with this prefix did not exist yet. */
function readingBefore(services: Services, prefix: string): Services {
  const events: EventStore = Object.create(services.events);
  events.readStream = async (streamId: string, options?: ReadStreamOptions) => (streamId.startsWith(prefix) ? [] : services.events.readStream(streamId, options));
  return { ...services, events };
}

async function setUp(t: Test, clock = manualClock()) {
  const services = await testServices(t, { clock });
  services.projections.start();
  const input: SubmissionInput = {
    plan: 'pro',
    token: issueEmbedToken(services.keys.embedTokens, 'widget', 'wgt_1', clock()),
    answers: { rating: 4 },
    request: { headers: {}, ip: '203.0.113.9', client: { fingerprint: 'fp-1' } },
  };
  return { services, input };
}

t.test('a visitor\'s second response refused by the store, though the read before the decision missed the first', async (t) => {
  const { services, input } = await setUp(t);
  const single = target({ prevent_duplicates: true });
  t.equal((await submitResponse(services, single, input)).kept, true);
  await t.rejects(submitResponse(readingBefore(services, 'guard-'), single, input), { code: 'duplicate_submission' });
  const responses = (await services.events.readAll({ limit: 100 })).filter((event) => event.type === 'ResponseSubmitted');
  t.equal(responses.length, 1, 'the second response was not recorded');
});

t.test('a slot numbered past max_responses closes the object, though the read before the decision saw one left', async (t) => {
  const { services, input } = await setUp(t);
  const limited = target({ max_responses: 1 });
  t.equal((await submitResponse(services, limited, input)).kept, true);
  await t.rejects(submitResponse(readingBefore(services, 'quota-'), limited, input), { code: 'widget_closed' });
  const responses = (await services.events.readAll({ limit: 100 })).filter((event) => event.type === 'ResponseSubmitted');
  t.equal(responses.length, 1, 'the second response was not recorded');
});

t.test('a submission that finds the last slot taken at the store leaves nothing of itself, its guard and network count included: the visitor may answer once a slot is free', async (t) => {
  const { services, input } = await setUp(t);
  const full = target({ max_responses: 1, prevent_duplicates: true, network_limit_per_hour: 3 });
  t.equal((await submitResponse(services, full, input)).kept, true, 'the first visitor takes the one slot');
  const head = await services.events.headPosition();
  const second = { ...input, request: { headers: {}, ip: '203.0.113.10', client: { fingerprint: 'fp-2' } } };
  await t.rejects(submitResponse(readingBefore(services, 'quota-'), full, second), { code: 'widget_closed' });
  t.equal(await services.events.headPosition(), head, 'no guard, count or slot of the refused submission');
  const raised = target({ max_responses: 2, prevent_duplicates: true, network_limit_per_hour: 3 });
  t.equal((await submitResponse(services, raised, second)).kept, true, 'the same visitor, once the owner raised the limit: taken, not a duplicate');
  const types = (await services.events.readAll({ after: head, limit: 10 })).map((event) => event.type).sort();
  t.same(types, ['NetworkSubmissionCounted', 'ResponseSubmitted', 'SubmissionGuarded', 'SubmissionSlotReserved'], 'recorded once, whole');
});

t.test('a token verified on the summary is still refused at the decision once its lifetime has run out', async (t) => {
  const clock = manualClock();
  const { services, input } = await setUp(t, clock);
  const verified = { ...input, tokenIssuedAt: clock() };
  t.equal((await submitResponse(services, target({}), verified)).kept, true, 'within its lifetime');
  clock.advance(TOKEN_TTL_SECONDS * 1000 + 1);
  await t.rejects(submitResponse(services, target({}), verified), { code: 'invalid_token' });
  const responses = (await services.events.readAll({ limit: 100 })).filter((event) => event.type === 'ResponseSubmitted');
  t.equal(responses.length, 1, 'the late one was not recorded');
});

t.test('a honeypot catch records nothing and is counted', async (t) => {
  const { services, input } = await setUp(t);
  const result = await submitResponse(services, target({ honeypot: true, max_responses: 5, prevent_duplicates: true }), { ...input, honeypot: 'bot' });
  t.equal(result.kept, false);
  t.match(result.id, /^rsp_/, 'the bot gets an id all the same');
  t.same(await services.events.readAll({ limit: 100 }), [], 'no slot, no guard, no response');
  t.match(services.metrics.render(), /feedback_honeypot_caught_total\{kind="widget"\} 1/);
});

t.test('a vote caught by the honeypot records nothing and is counted', async (t) => {
  const { services } = await setUp(t);
  const at = services.clock().toISOString();
  const poll = {
    id: 'pol_1',
    account_id: 'acc_1',
    question: 'Best fruit?',
    options: [{ id: 'apple', text: 'Apple' }, { id: 'pear', text: 'Pear' }],
    allow_multiple: false,
    settings: { ...settings, honeypot: true, max_responses: 5 },
    theme: { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'light' as const },
    language: 'en',
    translations: {},
    published: true,
    created_at: at,
    updated_at: at,
  };
  const body = { option_ids: ['pear'], _token: issueEmbedToken(services.keys.embedTokens, 'poll', 'pol_1', services.clock()), _hp: 'bot', metadata: {} };
  t.equal(await castVote(services, poll, 'business', body, { headers: {}, ip: '203.0.113.9' }), undefined);
  t.same(await services.events.readAll({ limit: 100 }), [], 'no slot, no vote');
  t.match(services.metrics.render(), /feedback_honeypot_caught_total\{kind="poll"\} 1/);
  t.match(await castVote(services, poll, 'free', body, { headers: {}, ip: '203.0.113.9' }), { id: /^vote_/, position: BigInt }, 'a Free owner\'s poll keeps it');
});

t.test('a network past its limit is refused by the store, though the read before the decision counted none', async (t) => {
  const { services, input } = await setUp(t);
  const single = target({ prevent_duplicates: true, network_limit_per_hour: 3, max_responses: 10 });
  const headers = { 'user-agent': 'Firefox' };
  const from = (fingerprint: string) => ({ ...input, request: { ...input.request, headers, client: { fingerprint } } });
  for (const fingerprint of ['fp-1', 'fp-2', 'fp-3']) t.equal((await submitResponse(services, single, from(fingerprint))).kept, true, fingerprint);
  const events: EventStore = Object.create(services.events);
  events.streamState = async (streamId: string) => (streamId.startsWith('net-') ? 'no_stream' : services.events.streamState(streamId));
  await t.rejects(submitResponse({ ...services, events }, single, from('fp-4')), { code: 'duplicate_submission', message: /this address and browser this hour/ });
  const feed = await services.events.readAll({ limit: 100 });
  t.equal(feed.filter((event) => event.type === 'ResponseSubmitted').length, 3, 'the fourth response was not recorded');
  t.equal(feed.filter((event) => event.type === 'SubmissionSlotReserved').length, 3, 'nor did it take a slot');
});
