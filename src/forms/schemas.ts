import { z } from 'zod';
import { ReadOnly } from '../embeddables/read-only.js';
import { Presentation, PresentationPatch } from '../embeddables/presentation.js';
import { FormQuestions } from '../embeddables/questions.js';
import { patchOf } from '../kernel/patch.js';
import { PageSettings } from '../embeddables/settings.js';
import { Flow, PresentationStyle } from '../embeddables/logic.js';
import { Language, Translations } from '../embeddables/translations.js';

/** D7: a form's questions may hold one consent question, whose record each response keeps. */
const Questions = FormQuestions.refine((questions) => questions.filter((q) => q.type === 'consent').length <= 1, 'a form holds at most one consent question');

/** A form's settings: a page's, and whether the answers of visitors who leave before submitting are kept (`keep_partial`). */
export const FormSettings = PageSettings.extend({
  /** The embed sends each page as the visitor leaves it, kept as a partial response until the submission completes it. */
  keep_partial: z.boolean().default(false),
});

export const FormConfig = z.object({ ...Presentation, settings: FormSettings, questions: Questions, ...Flow, presentation: PresentationStyle, language: Language, translations: Translations });
export type FormConfig = z.infer<typeof FormConfig>;

const options = (...labels: string[]) => labels.map((label) => ({ id: label.toLowerCase().replace(/\W+/g, '_'), label }));

/** One question of every type with its settings, for the API reference. */
const EVERY_TYPE_EXAMPLE = {
  title: 'Your stay',
  hidden_fields: ['utm_source', 'user_id'],
  redirect_url: 'https://example.com/thanks?guest={{name}}&from={{utm_source}}',
  questions: [
    { id: 'intro', type: 'statement', title: 'A few questions about your stay', description: 'It takes two minutes.' },
    { id: 'name', type: 'short_text', title: 'Your name', required: true, max_length: 100 },
    { id: 'story', type: 'long_text', title: 'Tell us about it' },
    { id: 'email', type: 'email', title: 'Email' },
    { id: 'phone', type: 'phone', title: 'Phone', default_country: 'GB' },
    { id: 'site', type: 'url', title: 'Your website' },
    { id: 'guests', type: 'number', title: 'Guests', min: 1, max: 12, integer: true },
    { id: 'arrival', type: 'date', title: 'Arrival', min: '2026-01-01' },
    { id: 'room', type: 'single_choice', title: 'Room', choices: options('Single', 'Double', 'Suite'), display: 'radio' },
    { id: 'extras', type: 'multiple_choice', title: 'Extras', choices: options('Breakfast', 'Parking', 'Late check-out'), max_selected: 2 },
    { id: 'stars', type: 'star_rating', title: 'Stars', starRatingSettings: { maxStars: 5 } },
    { id: 'nps', type: 'nps', title: 'How likely are you to recommend us?' },
    { id: 'calm', type: 'opinion_scale', title: 'How calm was it?', start: 1, end: 7, start_label: 'Noisy', end_label: 'Calm' },
    { id: 'again', type: 'yes_no', title: 'Would you stay again?' },
    { id: 'order', type: 'ranking', title: 'Rank what matters most', choices: options('Price', 'Location', 'Quiet') },
    { id: 'grid', type: 'matrix', title: 'Rate each', rows: options('Staff', 'Food'), columns: options('Poor', 'Fine', 'Great') },
    { id: 'bug', type: 'severity', title: 'How bad was the worst problem?' },
    { id: 'consent', type: 'consent', title: 'Consent', text: 'I agree that Example Ltd may keep my answers for a year.', required: true },
  ],
};

/** A three-page form with a jump and two endings besides the default, for the API reference. */
export const BRANCHING_EXAMPLE = {
  title: 'Developer survey',
  presentation: 'all',
  settings: { keep_partial: true },
  questions: [
    { id: 'role', type: 'single_choice', title: 'What do you do?', required: true, choices: options('Developer', 'Designer', 'Other') },
    { id: 'role_other', type: 'short_text', title: 'What is it?', required: true, show_if: { question: 'role', op: 'equals', value: 'other' } },
    { id: 'languages', type: 'multiple_choice', title: 'Which languages do you write?', required: true, choices: options('TypeScript', 'Go', 'Rust') },
    { id: 'score', type: 'nps', title: 'How likely are you to recommend us?', required: true },
  ],
  pages: [
    { id: 'about', title: 'About you', question_ids: ['role', 'role_other'] },
    { id: 'code', title: 'Your code', question_ids: ['languages'] },
    { id: 'rating', title: 'Your rating', question_ids: ['score'] },
  ],
  logic: [
    { page: 'about', if: { question: 'role', op: 'not_equals', value: 'developer' }, go_to: 'rating' },
    { page: 'rating', if: { question: 'score', op: 'greater_than', value: 8 }, go_to: 'fans' },
    { page: 'rating', if: { question: 'score', op: 'less_than', value: 7 }, go_to: 'sorry' },
  ],
  endings: [
    { id: 'fans', title: 'Thank you!', message: 'Would you tell a friend?', redirect_url: 'https://example.com/refer' },
    { id: 'sorry', title: 'Sorry to hear it', message: 'We read every answer and will do better.' },
  ],
};

export const CreateFormBody = z.strictObject({
  ...PresentationPatch,
  settings: patchOf(FormSettings).optional(),
  questions: Questions.optional(),
  pages: Flow.pages.optional(),
  logic: Flow.logic.optional(),
  endings: Flow.endings.optional(),
  presentation: PresentationStyle.optional().describe('`all` (default): a page at a time; `one_by_one`: one question at a time, with keyboard shortcuts'),
  language: Language.optional().describe('The language the form is written in (default `en`).'),
  translations: Translations.optional(),
}).meta({
  examples: [
    {
      title: 'Newsletter sign-up',
      questions: [
        { id: 'email', type: 'email', title: 'Your email address', required: true },
        { id: 'consent', type: 'consent', title: 'Consent', text: 'I agree that Example Ltd may send me its monthly newsletter. I can unsubscribe at any time.', required: true },
      ],
      settings: { closes_at: '2027-01-31T23:59:59Z' },
      hidden_fields: ['utm_source'],
      redirect_url: 'https://example.com/welcome?email={{email}}&from={{utm_source}}',
    },
    EVERY_TYPE_EXAMPLE,
    BRANCHING_EXAMPLE,
    {
      title: 'Newsletter sign-up',
      language: 'en',
      questions: [
        { id: 'email', type: 'email', title: 'Your email address', required: true },
        { id: 'consent', type: 'consent', title: 'Consent', text: 'I agree that Example Ltd may send me its newsletter.', required: true },
      ],
      translations: {
        de: { title: 'Newsletter abonnieren', questions: { email: { title: 'Ihre E-Mail-Adresse' }, consent: { title: 'Einwilligung', text: 'Ich bin einverstanden, dass Example Ltd mir den Newsletter sendet.' } } },
        fr: { title: 'Inscription à la newsletter', questions: { email: { title: 'Votre adresse e-mail' }, consent: { title: 'Consentement', text: "J'accepte qu'Example Ltd m'envoie sa newsletter." } } },
      },
    },
  ],
});
export type CreateFormBody = z.infer<typeof CreateFormBody>;

/** Any subset plus `published`; the read-only fields a GET shows (and `version`, `keep_partial`) may be sent unchanged only. */
export const UpdateFormBody = CreateFormBody.partial()
  .extend({
    published: z.boolean().optional(),
    ...ReadOnly,
    version: z.number().int().optional(),
    /** Shown to visitors beside the form; changed through `settings.keep_partial`. */
    keep_partial: z.boolean().optional(),
  })
  .meta({ examples: [{ title: 'Newsletter sign-up (2027)', published: true }] });
export type UpdateFormBody = z.infer<typeof UpdateFormBody>;

/** The replies to a create and an update, the API's and the dashboard's. */
export const FormCreatedReply = z.object({ id: z.string(), title: z.string(), published: z.literal(false), version: z.literal(1), created_at: z.string() });
export const FormUpdatedReply = z.object({ id: z.string(), title: z.string(), published: z.boolean(), version: z.number().int(), updated_at: z.string() });
