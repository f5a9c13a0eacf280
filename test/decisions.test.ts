import t from 'tap';
import { form } from '../src/forms/form.js';
import type { FormEvent } from '../src/forms/events.js';
import { poll } from '../src/polls/poll.js';
import type { PollEvent } from '../src/polls/events.js';
import { widget } from '../src/widgets/widget.js';
import type { WidgetEvent } from '../src/widgets/events.js';
import { aggregateOf } from './support/decider.js';

const at = '2026-11-22T10:00:00.000Z';
const later = '2026-11-22T11:00:00.000Z';
const settings = { allowed_domains: [], closes_at: null, max_responses: null, rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null };
/** Forms and polls have a hosted page, which search engines skip unless the owner says. */
const pageSettings = { ...settings, indexable: false };
const theme = { primaryColor: '#4f46e5', backgroundColor: '#ffffff' };
const defaultTheme = { ...theme, text_color: null, mode: 'light' as const };

t.test('widget', async (t) => {
  const spec = aggregateOf(t, widget);
  const history: WidgetEvent[] = spec.given([]).when({ type: 'CreateWidget', widget_id: 'w1', account_id: 'a1', body: { widget_type: 'nps', title: 'NPS' }, at }).thenMatches([
    { type: 'WidgetCreated', data: { widget_id: 'w1', account_id: 'a1', widget_type: 'nps', questions: [{ type: 'nps' }, { type: 'long_text' }], settings, theme } },
  ]);
  spec.given(history).when({ type: 'CreateWidget', widget_id: 'w1', account_id: 'a1', body: { widget_type: 'nps', title: 'NPS' }, at }).thenThrows('conflict');
  spec.given(history).when({ type: 'UpdateWidget', account_id: 'a1', body: { title: 'NPS' }, at: later }).then([], 'no change, no event');
  spec.given(history).when({ type: 'UpdateWidget', account_id: 'a1', body: { title: 'New', published: true }, at: later }).then([
    { type: 'WidgetUpdated', data: { widget_id: 'w1', changes: { title: 'New' }, updated_at: later } },
    { type: 'WidgetPublished', data: { widget_id: 'w1', published_at: later } },
  ]);
  spec.given(history).when({ type: 'UpdateWidget', account_id: 'a2', body: { title: 'Theirs' }, at }).thenThrows('widget_not_found', 'another account');
  spec.given(history).when({ type: 'UpdateWidget', account_id: 'a1', body: { questions: [] }, at }).thenThrows('validation_error');
  const published: WidgetEvent = { type: 'WidgetPublished', data: { widget_id: 'w1', published_at: later } };
  spec.given([...history, published]).when({ type: 'UpdateWidget', account_id: 'a1', body: { published: false }, at }).then([
    { type: 'WidgetUnpublished', data: { widget_id: 'w1', unpublished_at: at } },
  ]);
  const deleted: WidgetEvent = { type: 'WidgetDeleted', data: { widget_id: 'w1', account_id: 'a1', deleted_at: later } };
  spec.given(history).when({ type: 'DeleteWidget', account_id: 'a1', at: later }).then([deleted]);
  spec.given([...history, deleted]).when({ type: 'DeleteWidget', account_id: 'a1', at: later }).thenThrows('widget_not_found', 'deleted is gone');
  spec.given([...history, deleted]).when({ type: 'UpdateWidget', account_id: 'a1', body: { title: 'x' }, at }).thenThrows('widget_not_found');
});

t.test('form', async (t) => {
  const spec = aggregateOf(t, form);
  const consent = { id: 'c', type: 'consent' as const, title: 'Consent', text: 'I agree', required: true };
  const history: FormEvent[] = spec.given([]).when({ type: 'CreateForm', form_id: 'f1', account_id: 'a1', body: { title: 'Signup', questions: [consent] }, at }).thenMatches([
    { type: 'FormCreated', data: { form_id: 'f1', version: 1, questions: [consent] } },
  ]);
  spec.given(history).when({ type: 'UpdateForm', account_id: 'a1', body: { title: 'Sign up' }, at: later }).then(
    [{ type: 'FormUpdated', data: { form_id: 'f1', changes: { title: 'Sign up' }, version: 1, updated_at: later } }],
    'a title change keeps the version',
  );
  const reworded = { ...consent, text: 'I agree, really' };
  spec.given(history).when({ type: 'UpdateForm', account_id: 'a1', body: { questions: [reworded] }, at: later }).then(
    [{ type: 'FormUpdated', data: { form_id: 'f1', changes: { questions: [reworded] }, version: 2, updated_at: later } }],
    'a question change raises it',
  );
  const v2: FormEvent = { type: 'FormUpdated', data: { form_id: 'f1', changes: { questions: [reworded] }, version: 2, updated_at: later } };
  spec.given([...history, v2]).when({ type: 'UpdateForm', account_id: 'a1', body: { questions: [consent] }, at: later }).thenMatches([{ data: { version: 3 } }]);
  spec.given([...history, v2]).when({ type: 'UpdateForm', account_id: 'a2', body: { title: 'x' }, at }).thenThrows('form_not_found');
  spec.given([]).when({ type: 'CreateForm', form_id: 'f2', account_id: 'a1', body: { title: 'Two', questions: [consent, { ...consent, id: 'd' }] }, at }).thenThrows('validation_error');
  const empty = spec.given([]).when({ type: 'CreateForm', form_id: 'f3', account_id: 'a1', body: { title: 'Empty' }, at }).thenMatches([{ type: 'FormCreated' }]);
  spec.given(empty).when({ type: 'UpdateForm', account_id: 'a1', body: { published: true }, at }).thenThrows('validation_error', 'no questions, no publishing');
  spec.given(history).when({ type: 'DeleteForm', account_id: 'a1', at }).then([{ type: 'FormDeleted', data: { form_id: 'f1', account_id: 'a1', deleted_at: at } }]);
  spec.given(history).when({ type: 'CreateForm', form_id: 'f1', account_id: 'a1', body: { title: 'Again' }, at }).thenThrows('conflict');
});

t.test('poll', async (t) => {
  const spec = aggregateOf(t, poll);
  const history: PollEvent[] = [
    { type: 'PollCreated', data: { poll_id: 'p1', account_id: 'a1', question: 'Q?', options: [{ id: 'o1', text: 'A' }, { id: 'o2', text: 'B' }], allow_multiple: false, settings: pageSettings, theme: defaultTheme, language: 'en', translations: {}, created_at: at } },
  ];
  spec.given([]).when({ type: 'CreatePoll', poll_id: 'p1', account_id: 'a1', body: { question: 'Q?', options: [{ text: 'A' }, { text: 'B' }] }, option_ids: ['o1', 'o2'], at }).then(history);
  spec.given(history).when({ type: 'UpdatePoll', account_id: 'a1', body: { options: [{ id: 'o2', text: 'B' }, { text: 'C' }] }, new_option_ids: ['o3'], at: later }).then([
    { type: 'PollUpdated', data: { poll_id: 'p1', changes: { options: [{ id: 'o2', text: 'B' }, { id: 'o3', text: 'C' }] }, updated_at: later } },
  ]);
  spec.given(history).when({ type: 'UpdatePoll', account_id: 'a1', body: { theme: { mode: 'dark' } }, new_option_ids: [], at: later }).then([
    { type: 'PollUpdated', data: { poll_id: 'p1', changes: { theme: { ...defaultTheme, mode: 'dark' } }, updated_at: later } },
  ], 'a theme merged key by key');
  spec.given(history).when({ type: 'UpdatePoll', account_id: 'a1', body: { theme: { text_color: '#eeeeee' } }, new_option_ids: [], at }).thenThrows('validation_error', 'text that would not read');
  spec.given(history).when({ type: 'UpdatePoll', account_id: 'a1', body: { options: [{ id: 'o9', text: 'X' }, { text: 'C' }] }, new_option_ids: ['o3'], at }).thenThrows('validation_error');
  spec.given(history).when({ type: 'UpdatePoll', account_id: 'a1', body: { options: [{ id: 'o1', text: 'X' }, { id: 'o1', text: 'Y' }] }, new_option_ids: [], at }).thenThrows('validation_error', 'an id twice');
  spec.given(history).when({ type: 'UpdatePoll', account_id: 'a1', body: { published: true, allow_multiple: false }, new_option_ids: [], at }).then([
    { type: 'PollPublished', data: { poll_id: 'p1', published_at: at } },
  ]);
  const vote: PollEvent = { type: 'VoteCast', data: { vote_id: 'v1', poll_id: 'p1', account_id: 'a1', option_ids: ['o1'], cast_at: at } };
  spec.given([...history, vote]).when({ type: 'UpdatePoll', account_id: 'a2', body: {}, new_option_ids: [], at }).thenThrows('poll_not_found', 'votes do not change the poll');
  spec.given(history).when({ type: 'DeletePoll', account_id: 'a1', at }).then([{ type: 'PollDeleted', data: { poll_id: 'p1', account_id: 'a1', deleted_at: at } }]);
  spec.given(history).when({ type: 'CreatePoll', poll_id: 'p1', account_id: 'a1', body: { question: 'Q?', options: [{ text: 'A' }, { text: 'B' }] }, option_ids: ['o1', 'o2'], at }).thenThrows('conflict');
});

t.test('read-only fields: accepted unchanged, refused changed, on widgets, forms and polls', async (t) => {
  const widgets = aggregateOf(t, widget);
  const created = widgets.given([]).when({ type: 'CreateWidget', widget_id: 'w1', account_id: 'a1', body: { widget_type: 'nps', title: 'NPS' }, at }).thenMatches([{ type: 'WidgetCreated' }]);
  const update = (body: object, closed?: boolean) => ({ type: 'UpdateWidget' as const, account_id: 'a1', body, ...(closed === undefined ? {} : { closed }), at: later });
  widgets.given(created).when(update({ id: 'w1', widget_type: 'nps', created_at: at, updated_at: at, closed: false, title: 'NPS' }, false)).then([], 'all unchanged: nothing to record');
  widgets.given(created).when(update({ created_at: '2026-11-22T11:00:00+01:00' })).then([], 'a timestamp in another offset is the same instant');
  widgets.given(created).when(update({ widget_type: 'contact' })).thenThrows('validation_error', 'the type', [{ path: 'body.widget_type', message: 'is read-only (now "nps"): send it unchanged or leave it out' }]);
  widgets.given(created).when(update({ id: 'w2', title: 'Renamed' })).thenThrows('validation_error', 'the id, even beside a change', [{ path: 'body.id' }]);
  widgets.given(created).when(update({ created_at: later, updated_at: later })).thenThrows('validation_error', 'timestamps', [{ path: 'body.created_at' }, { path: 'body.updated_at' }]);
  widgets.given(created).when(update({ closed: true }, false)).thenThrows('validation_error', 'closed', [{ path: 'body.closed' }]);

  const forms = aggregateOf(t, form);
  const form1 = forms.given([]).when({ type: 'CreateForm', form_id: 'f1', account_id: 'a1', body: { title: 'Signup' }, at }).thenMatches([{ type: 'FormCreated' }]);
  forms.given(form1).when({ type: 'UpdateForm', account_id: 'a1', body: { id: 'f1', version: 1, created_at: at, updated_at: at }, at: later }).then([], 'a form unchanged');
  forms.given(form1).when({ type: 'UpdateForm', account_id: 'a1', body: { version: 2 }, at: later }).thenThrows('validation_error', 'a form\'s version', [{ path: 'body.version' }]);

  const polls = aggregateOf(t, poll);
  const poll1: PollEvent[] = [{ type: 'PollCreated', data: { poll_id: 'p1', account_id: 'a1', question: 'Q?', options: [{ id: 'o1', text: 'A' }, { id: 'o2', text: 'B' }], allow_multiple: false, settings: pageSettings, theme: defaultTheme, language: 'en', translations: {}, created_at: at } }];
  polls.given(poll1).when({ type: 'UpdatePoll', account_id: 'a1', body: { id: 'p1', created_at: at, updated_at: at }, new_option_ids: [], at: later }).then([], 'a poll unchanged');
  polls.given(poll1).when({ type: 'UpdatePoll', account_id: 'a1', body: { updated_at: later }, new_option_ids: [], at: later }).thenThrows('validation_error', 'a poll\'s updated_at', [{ path: 'body.updated_at' }]);
});
