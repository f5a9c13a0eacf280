import { FORMS } from '../projections/forms.js';
import { POLLS } from '../projections/polls.js';
import { WIDGETS } from '../projections/widgets.js';
import type { Form } from './forms/form.js';
import type { Poll } from './polls/poll.js';
import type { Embeddable, EmbeddableDoc } from './submissions/embeddable.js';
import type { Widget } from './widgets/widget.js';

/** The three kinds of object a site owner embeds, where they are stored and served. */
export const WIDGET: Embeddable<Widget & EmbeddableDoc> = { kind: 'widget', collection: WIDGETS, path: '/api/widgets' };
export const FORM: Embeddable<Form & EmbeddableDoc> = { kind: 'form', collection: FORMS, path: '/api/forms' };
export const POLL: Embeddable<Poll & EmbeddableDoc> = { kind: 'poll', collection: POLLS, path: '/api/polls' };

export const EMBEDDABLES = { widget: WIDGET, form: FORM, poll: POLL } as const;
