import t from 'tap';
import type { Poll } from '../../src/polls/poll.js';
import { decideVote, type CastVote, type VoteState } from '../../src/polls/vote.js';
import type { PageSettings as Settings } from '../../src/embeddables/settings.js';
import { decisionOf } from '../support/decider.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const settings: Settings = { allowed_domains: [], closes_at: null, max_responses: null, rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null, indexable: false };
const poll: Poll = {
  id: 'pol_1',
  account_id: 'acc_1',
  question: 'Best fruit?',
  options: [{ id: 'apple', text: 'Apple' }, { id: 'pear', text: 'Pear' }, { id: 'plum', text: 'Plum' }],
  allow_multiple: false,
  settings,
  theme: { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'light' },
  language: 'en',
  translations: {},
  published: true,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
};

const command = (changes: Partial<CastVote> = {}): CastVote => ({
  voteId: 'vote_1',
  plan: 'pro',
  optionIds: ['pear'],
  now,
  issuedAt: new Date('2026-11-22T09:59:00.000Z'),
  host: 'shop.example',
  ...changes,
});
const state = (changes: Partial<Poll> = {}, facts: Partial<Omit<VoteState, 'poll'>> = {}): VoteState => ({
  poll: { ...poll, ...changes, settings: { ...settings, ...changes.settings } },
  full: false,
  visited: false,
  fromNetwork: 0,
  ...facts,
});
const claims = [
  { type: 'SubmissionGuarded' as const, data: { target: 'poll' as const, target_id: 'pol_1', response_id: 'vote_1' } },
  { type: 'NetworkSubmissionCounted' as const, data: { target: 'poll' as const, target_id: 'pol_1' } },
];
const vote = (optionIds: string[]) => ({
  type: 'VoteCast' as const,
  data: { vote_id: 'vote_1', poll_id: 'pol_1', account_id: 'acc_1', option_ids: optionIds, cast_at: now.toISOString() },
});
/** A vote of a poll that limits its networks: the guard, the network's count, the vote. */
const cast = (optionIds: string[]) => [...claims, vote(optionIds)];
/** A vote of a poll without a network limit (the default): the guard and the vote. */
const guardedVote = (optionIds: string[]) => [claims[0]!, vote(optionIds)];

t.test('one option of a single-choice poll', async (t) => {
  const spec = decisionOf(t, decideVote);
  spec.given(state()).when(command()).then(guardedVote(['pear']));
  spec.given(state()).when(command({ optionIds: ['pear', 'plum'] })).thenThrows('validation_error', 'two options', [{ path: 'body.option_ids', message: 'this poll takes one option' }]);
});

t.test('several options where the poll allows them, none twice', async (t) => {
  const spec = decisionOf(t, decideVote);
  const multiple = state({ allow_multiple: true });
  spec.given(multiple).when(command({ optionIds: ['apple', 'plum'] })).then(guardedVote(['apple', 'plum']));
  spec.given(multiple).when(command({ optionIds: ['apple', 'apple'] })).thenThrows('validation_error', 'an option twice', [{ path: 'body.option_ids', message: 'must not name an option twice' }]);
});

t.test('an option the poll does not have', async (t) => {
  decisionOf(t, decideVote)
    .given(state({ allow_multiple: true }))
    .when(command({ optionIds: ['apple', 'kiwi'] }))
    .thenThrows('validation_error', 'named by its place', [{ path: 'body.option_ids.1', message: 'is not an option of this poll' }]);
});

t.test('one vote per visitor, whatever the plan', async (t) => {
  const spec = decisionOf(t, decideVote);
  for (const plan of ['free', 'pro', 'business'] as const) spec.given(state({}, { visited: true })).when(command({ plan })).thenThrows('duplicate_submission', plan);
  spec.given(state({}, { visited: true })).when(command({ optionIds: ['kiwi'] })).thenThrows('validation_error', 'the choice is checked first');
});

t.test('the second signal, where the owner sets it: a network (address and user agent) casts network_limit_per_hour votes an hour, whatever its fingerprints', async (t) => {
  const spec = decisionOf(t, decideVote);
  spec.given(state({}, { fromNetwork: 5000 })).when(command({ plan: 'free' })).then(guardedVote(['pear']), 'off by default: a shared network votes on, one vote a visitor');
  const limited = { settings: { ...settings, network_limit_per_hour: 3 } };
  spec.given(state(limited, { fromNetwork: 2 })).when(command({ plan: 'free' })).then(cast(['pear']), 'the third');
  spec.given(state(limited, { fromNetwork: 3 })).when(command({ plan: 'free' })).thenThrows('duplicate_submission', 'the fourth');
});

t.test('published, open, token, domain, in that order', async (t) => {
  const spec = decisionOf(t, decideVote);
  spec.given(state({ published: false }, { full: true })).when(command({ issuedAt: null })).thenThrows('poll_not_published');
  spec.given(state({ settings: { ...settings, closes_at: now.toISOString() } })).when(command({ issuedAt: null })).thenThrows('poll_closed', 'at closes_at');
  spec.given(state({ settings: { ...settings, allowed_domains: ['shop.example'] } })).when(command({ issuedAt: null, host: 'evil.example' })).thenThrows('invalid_token');
  spec.given(state({ settings: { ...settings, allowed_domains: ['shop.example'] } })).when(command({ host: 'evil.example', optionIds: ['kiwi'] })).thenThrows('domain_not_allowed');
});

t.test('max_responses: a vote takes a slot after the visitor\'s claims; with none left the poll is closed', async (t) => {
  const spec = decisionOf(t, decideVote);
  const limited = { settings: { ...settings, max_responses: 2, network_limit_per_hour: 3 } };
  spec.given(state(limited)).when(command()).then([...claims, { type: 'SubmissionSlotReserved', data: { target: 'poll', target_id: 'pol_1', response_id: 'vote_1' } }, vote(['pear'])]);
  spec.given(state(limited, { full: true })).when(command()).thenThrows('poll_closed');
  spec.given(state(limited, { visited: true })).when(command()).thenThrows('duplicate_submission', 'a repeat takes no slot');
  spec.given(state(limited, { fromNetwork: 3 })).when(command()).thenThrows('duplicate_submission', 'nor a network at its limit');
});

t.test('honeypot: a filled trap decides nothing (Pro and Business)', async (t) => {
  const spec = decisionOf(t, decideVote);
  const trapped = { settings: { ...settings, honeypot: true } };
  spec.given(state(trapped)).when(command({ honeypot: 'bot' })).then([]);
  spec.given(state(trapped, { visited: true })).when(command({ plan: 'business', honeypot: 'bot' })).then([], 'before the duplicate check');
  spec.given(state(trapped)).when(command({ plan: 'free', honeypot: 'bot' })).then(guardedVote(['pear']), 'Free: not enforced');
  spec.given(state(trapped)).when(command({ honeypot: 'bot', optionIds: ['kiwi'] })).thenThrows('validation_error', 'after the choice');
});
