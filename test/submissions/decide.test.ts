import t from 'tap';
import type { Answers } from '../../src/embeddables/questions.js';
import { decideSubmission, type SubmissionState, type SubmissionTarget, type SubmitResponse } from '../../src/submissions/decide.js';
import { issueEmbedToken, verifyEmbedToken } from '../../src/embeddables/access.js';
import type { ConsentRecord } from '../../src/submissions/events.js';
import type { ResponseMetadata } from '../../src/submissions/metadata.js';
import type { Settings } from '../../src/embeddables/settings.js';
import { decisionOf } from '../support/decider.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const issuedAt = new Date('2026-11-22T09:59:00.000Z');
const key = Buffer.alloc(32, 7);
const settings: Settings = { allowed_domains: [], closes_at: null, max_responses: null, rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null };
const metadata: ResponseMetadata = {
  browser: 'Firefox',
  browser_version: '133.0',
  device: 'Desktop',
  os: 'Linux',
  ip_hash: 'ip-hash',
  language: 'en-GB',
  completion_time_ms: 60_000,
  page_url: 'https://shop.example/pricing',
  page_title: 'Pricing',
};
const widget: SubmissionTarget = {
  kind: 'widget',
  id: 'wgt_1',
  accountId: 'acc_1',
  published: true,
  settings,
  questions: [{ id: 'rating', type: 'star_rating', title: 'How was it?', required: true, starRatingSettings: { maxStars: 5 } }],
};
const consentText = 'I agree that Acme stores my answers for 12 months.';
const form: SubmissionTarget = {
  kind: 'form',
  id: 'frm_1',
  accountId: 'acc_1',
  published: true,
  settings,
  version: 3,
  questions: [
    { id: 'name', type: 'short_text', title: 'Name', required: true },
    { id: 'gdpr', type: 'consent', title: 'Consent', text: consentText, required: false },
  ],
};

const command = (changes: Partial<SubmitResponse> = {}): SubmitResponse => ({
  responseId: 'rsp_1',
  plan: 'pro',
  answers: { rating: 4 },
  now,
  issuedAt,
  host: 'shop.example',
  metadata,
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  guard: 'guard-widget-wgt_1-visitorhash',
  ...changes,
});
const state = (target: Partial<SubmissionTarget> = {}, facts: Partial<Omit<SubmissionState, 'target'>> = {}): SubmissionState => ({
  target: { ...widget, ...target, settings: { ...widget.settings, ...target.settings } },
  full: false,
  visited: false,
  fromNetwork: 0,
  ...facts,
});
const submitted = (changes: Record<string, unknown> = {}) => ({
  type: 'ResponseSubmitted' as const,
  data: { response_id: 'rsp_1', account_id: 'acc_1', widget_id: 'wgt_1', answers: { rating: 4 }, ending: null, language: 'en', metadata, submitted_at: now.toISOString(), ...changes },
});
const slot = (target: 'widget' | 'form' = 'widget', id = 'wgt_1') => ({ type: 'SubmissionSlotReserved' as const, data: { target, target_id: id, response_id: 'rsp_1' } });
const guarded = { type: 'SubmissionGuarded' as const, data: { target: 'widget' as const, target_id: 'wgt_1', response_id: 'rsp_1' } };
const counted = { type: 'NetworkSubmissionCounted' as const, data: { target: 'widget' as const, target_id: 'wgt_1' } };

t.test('a response to a published, open widget is recorded as it was answered', async (t) => {
  decisionOf(t, decideSubmission).given(state()).when(command()).then([submitted()]);
});

t.test('an unpublished object takes nothing, and says so before anything else', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  spec.given(state({ published: false })).when(command()).thenThrows('widget_not_published');
  spec
    .given(state({ published: false, settings: { ...settings, closes_at: '2026-11-01T00:00:00Z' } }, { full: true }))
    .when(command({ issuedAt: null, host: null, answers: { nope: 1 } }))
    .thenThrows('widget_not_published', 'before closed, token and answers');
  spec.given({ target: { ...form, published: false }, full: false, visited: false, fromNetwork: 0 }).when(command()).thenThrows('form_not_published');
});

t.test('closed at closes_at, and once every max_responses slot is taken', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  spec.given(state({ settings: { ...settings, closes_at: now.toISOString() } })).when(command()).thenThrows('widget_closed', 'at closes_at');
  spec.given(state({ settings: { ...settings, closes_at: '2026-11-22T10:00:00.001Z' } })).when(command()).then([submitted()], 'a millisecond before it');
  spec.given(state({ settings: { ...settings, closes_at: '2026-11-22T09:00:00Z' } })).when(command({ issuedAt: null })).thenThrows('widget_closed', 'before the token');
  spec.given(state({ settings: { ...settings, max_responses: 2 } }, { full: true })).when(command()).thenThrows('widget_closed', 'every slot taken');
  spec.given(state({ settings: { ...settings, max_responses: 2 } })).when(command()).then([slot(), submitted()], 'a slot left: the response takes it first');
  spec.given({ target: form, full: true, visited: false, fromNetwork: 0 }).when(command()).thenThrows('form_closed');
});

t.test('the token must be genuine, this object\'s and fresh', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  // The shell turns the token into its issue time with the same function.
  const issued = (token: unknown) => verifyEmbedToken(key, token, 'widget', 'wgt_1', now);
  const minted = (target: 'widget' | 'form', id: string, at: Date) => issueEmbedToken(key, target, id, at);
  spec.given(state()).when(command({ issuedAt: issued(minted('widget', 'wgt_1', issuedAt)) })).then([submitted()], 'a fresh token of this widget');
  spec.given(state()).when(command({ issuedAt: issued(undefined) })).thenThrows('invalid_token', 'missing');
  spec.given(state()).when(command({ issuedAt: issued(`${minted('widget', 'wgt_1', issuedAt).slice(0, -2)}xx`) })).thenThrows('invalid_token', 'forged');
  spec.given(state()).when(command({ issuedAt: issued(minted('widget', 'wgt_1', new Date(now.getTime() - 1_800_001))) })).thenThrows('invalid_token', 'expired after 1800 s');
  spec.given(state()).when(command({ issuedAt: issued(minted('widget', 'wgt_2', issuedAt)) })).thenThrows('invalid_token', 'another widget\'s');
  spec.given(state()).when(command({ issuedAt: issued(minted('form', 'wgt_1', issuedAt)) })).thenThrows('invalid_token', 'a form\'s of the same id');
  spec
    .given(state({ settings: { ...settings, allowed_domains: ['shop.example'] } }))
    .when(command({ issuedAt: null, host: 'evil.example' }))
    .thenThrows('invalid_token', 'before the domain');
});

t.test('only the allowed sites may embed the object', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const allowed = state({ settings: { ...settings, allowed_domains: ['shop.example', '*.blog.example'] } });
  spec.given(allowed).when(command({ host: 'shop.example' })).then([submitted()]);
  spec.given(allowed).when(command({ host: 'a.blog.example' })).then([submitted()], 'a subdomain of a wildcard');
  spec.given(allowed).when(command({ host: 'evil.example' })).thenThrows('domain_not_allowed');
  spec.given(allowed).when(command({ host: null })).thenThrows('domain_not_allowed', 'no Origin or Referer');
  spec.given(allowed).when(command({ host: 'evil.example', answers: { nope: 1 } })).thenThrows('domain_not_allowed', 'before the answers');
});

t.test('answers must fit the questions', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  spec.given(state()).when(command({ answers: { rating: 6 } })).thenThrows('validation_error', 'out of range', [{ path: 'answers.rating' }]);
  spec.given(state()).when(command({ answers: {} })).thenThrows('validation_error', 'a required answer missing', [{ path: 'answers.rating', message: 'is required' }]);
  spec.given(state()).when(command({ answers: { rating: 4, extra: 'x' } })).thenThrows('validation_error', 'an unknown question', [{ path: 'answers.extra' }]);
  spec
    .given(state({ settings: { ...settings, honeypot: true, prevent_duplicates: true } }, { visited: true }))
    .when(command({ answers: { rating: 0 }, honeypot: 'bot' }))
    .thenThrows('validation_error', 'before the honeypot and the duplicate check');
});

t.test('prevent_duplicates: one response per visitor on every plan, the guard recorded before it, no network count', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const single = { settings: { ...settings, prevent_duplicates: true } };
  const guardedResponse = submitted({ duplicate_guard: 'guard-widget-wgt_1-visitorhash' });
  for (const plan of ['free', 'pro', 'business'] as const) {
    spec.given(state(single)).when(command({ plan })).then([guarded, guardedResponse], `${plan}: a first visit`);
    spec.given(state(single, { visited: true })).when(command({ plan })).thenThrows('duplicate_submission', `${plan}: a second`);
  }
  spec.given(state(single, { fromNetwork: 1000 })).when(command()).then([guarded, guardedResponse], 'a busy network is no reason to refuse: the network limit is off by default');
  spec.given(state({}, { visited: true, fromNetwork: 9 })).when(command()).then([submitted()], 'without the setting, visitors may answer again');
});

t.test('a repeat never takes a max_responses slot: the guard and the network count come first', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const limited = { settings: { ...settings, prevent_duplicates: true, network_limit_per_hour: 3, max_responses: 3 } };
  spec.given(state(limited)).when(command()).then([guarded, counted, slot(), submitted({ duplicate_guard: 'guard-widget-wgt_1-visitorhash' })], 'guard, network, slot, response');
  spec.given(state(limited, { visited: true })).when(command()).thenThrows('duplicate_submission', 'a repeat decides no slot');
  spec.given(state(limited, { fromNetwork: 3 })).when(command()).thenThrows('duplicate_submission', 'nor does a network at its limit');
  spec.given(state({ settings: { ...settings, max_responses: 3 } }, { visited: true })).when(command()).then([slot(), submitted()], 'without prevent_duplicates: the slot only');
});

t.test('the second signal, where the owner sets it: a network (address and user agent) takes network_limit_per_hour responses an hour', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const both = { settings: { ...settings, prevent_duplicates: true, network_limit_per_hour: 3 } };
  spec.given(state(both, { fromNetwork: 2 })).when(command({ plan: 'free' })).then([guarded, counted, submitted({ duplicate_guard: 'guard-widget-wgt_1-visitorhash' })], 'the third from one network');
  spec.given(state(both, { fromNetwork: 3 })).when(command({ plan: 'free' })).thenThrows('duplicate_submission', 'the fourth, whatever its fingerprint');
  const networkOnly = { settings: { ...settings, network_limit_per_hour: 50 } };
  spec.given(state(networkOnly, { visited: true, fromNetwork: 49 })).when(command()).then([counted, submitted()], 'alone: the count without the guard, repeats of a visitor allowed');
  spec.given(state(networkOnly, { fromNetwork: 50 })).when(command()).thenThrows('duplicate_submission', 'the fifty-first');
});

t.test('honeypot: a filled trap decides nothing (Pro and Business)', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const trapped = { settings: { ...settings, honeypot: true } };
  spec.given(state(trapped)).when(command({ honeypot: 'http://spam.example' })).then([], 'Pro');
  spec.given(state(trapped)).when(command({ plan: 'business', honeypot: 'x' })).then([], 'Business');
  spec.given(state(trapped)).when(command({ honeypot: '' })).then([submitted()], 'an empty trap is a person');
  spec.given(state()).when(command({ honeypot: 'x' })).then([submitted()], 'without the setting the field means nothing');
  spec.given(state(trapped)).when(command({ plan: 'free', honeypot: 'x' })).then([submitted()], 'Free: not enforced');
  spec
    .given(state({ settings: { ...settings, honeypot: true, prevent_duplicates: true } }, { visited: true }))
    .when(command({ honeypot: 'x' }))
    .then([], 'a bot hears success even where a person would be a duplicate');
  spec.given(state(trapped, { full: true })).when(command({ honeypot: 'x' })).thenThrows('widget_closed', 'access is checked first');
});

t.test('forms: the response carries the consent record, built from the request', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const formState: SubmissionState = { target: form, full: false, visited: false, fromNetwork: 0 };
  const consentRecord: ConsentRecord = {
    consent_given: true,
    timestamp: now.toISOString(),
    ip_hash: 'ip-hash',
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    consent_text: consentText,
    form_version: 3,
  };
  const response = (answers: Answers, consent: ConsentRecord) => ({
    type: 'ResponseSubmitted' as const,
    data: { response_id: 'rsp_1', account_id: 'acc_1', form_id: 'frm_1', answers, ending: null, language: 'en', metadata, submitted_at: now.toISOString(), consent_record: consent },
  });
  spec.given(formState).when(command({ answers: { name: 'Ann', gdpr: true } })).then([response({ name: 'Ann', gdpr: true }, consentRecord)]);
  spec.given(formState).when(command({ answers: { name: 'Ann', gdpr: false } })).then([response({ name: 'Ann', gdpr: false }, { ...consentRecord, consent_given: false })], 'consent refused');
  spec.given(formState).when(command({ answers: { name: 'Ann' } })).then([response({ name: 'Ann' }, { ...consentRecord, consent_given: false })], 'consent not answered');
  spec.given(formState).when(command({ answers: { name: 'Ann', gdpr: true }, userAgent: '' })).then([response({ name: 'Ann', gdpr: true }, { ...consentRecord, user_agent: '' })], 'no user agent');
  spec
    .given({ ...formState, target: { ...form, questions: [form.questions[0]!] } })
    .when(command({ answers: { name: 'Ann' } }))
    .then([{ type: 'ResponseSubmitted', data: { response_id: 'rsp_1', account_id: 'acc_1', form_id: 'frm_1', answers: { name: 'Ann' }, ending: null, language: 'en', metadata, submitted_at: now.toISOString() } }], 'no consent question, no record');
  spec
    .given({ ...formState, target: { ...form, settings: { ...settings, max_responses: 1 } } })
    .when(command({ answers: { name: 'Ann', gdpr: true } }))
    .then([slot('form', 'frm_1'), response({ name: 'Ann', gdpr: true }, consentRecord)], 'a form takes slots too');
});

t.test('forms: a response records the language the visitor saw; its consent record keeps the consent text in that language', async (t) => {
  const spec = decisionOf(t, decideSubmission);
  const frenchText = "J'accepte qu'Acme conserve mes réponses pendant 12 mois.";
  const translated: SubmissionState = {
    target: { ...form, language: 'en', translations: { fr: { questions: { gdpr: { text: frenchText } } }, de: {} } },
    full: false,
    visited: false,
    fromNetwork: 0,
  };
  const record = (text: string) => ({ consent_given: true, timestamp: now.toISOString(), ip_hash: 'ip-hash', user_agent: command().userAgent, consent_text: text, form_version: 3 });
  const response = (language: string, text: string) => ({
    type: 'ResponseSubmitted' as const,
    data: { response_id: 'rsp_1', account_id: 'acc_1', form_id: 'frm_1', answers: { name: 'Ann', gdpr: true }, ending: null, language, metadata, submitted_at: now.toISOString(), consent_record: record(text) },
  });
  const answers = { name: 'Ann', gdpr: true };
  spec.given(translated).when(command({ answers, language: 'fr' })).then([response('fr', frenchText)], 'French: the French text');
  spec.given(translated).when(command({ answers, language: 'FR' })).then([response('fr', frenchText)], 'a tag in any letter case names the translation');
  spec.given(translated).when(command({ answers, language: 'de' })).then([response('de', consentText)], 'a translation without the consent text: the text as written');
  spec.given(translated).when(command({ answers, language: 'en' })).then([response('en', consentText)], "the form's own language");
  spec.given(translated).when(command({ answers })).then([response('en', consentText)], "none sent: the form's own language");
  spec
    .given(translated)
    .when(command({ answers, language: 'es' }))
    .thenThrows('validation_error', 'a language the form has no translation in', [{ path: 'language', message: 'the form has no translation in es (it has en, fr, de)' }]);
});
