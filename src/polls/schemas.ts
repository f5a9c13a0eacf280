import { z } from 'zod';
import { said } from '../kernel/text.js';
import { ReadOnly } from '../embeddables/read-only.js';
import { patchOf } from '../kernel/patch.js';
import { PageSettings } from '../embeddables/settings.js';
import { Theme } from '../embeddables/theme.js';
import { Language, Translations } from '../embeddables/translations.js';

const OptionText = said(200);
export const PollOption = z.object({ id: z.string(), text: OptionText });
export type PollOption = z.infer<typeof PollOption>;

export const PollConfig = z.object({
  question: said(500),
  options: z.array(PollOption).min(2).max(20),
  allow_multiple: z.boolean(),
  settings: PageSettings,
  theme: Theme,
  language: Language,
  translations: Translations,
});
export type PollConfig = z.infer<typeof PollConfig>;

/** D8: options get their ids from the service. */
export const CreatePollBody = z.strictObject({
  question: PollConfig.shape.question,
  options: z.array(z.strictObject({ text: OptionText })).min(2).max(20),
  allow_multiple: z.boolean().optional(),
  settings: patchOf(PageSettings).optional(),
  /** As a form's or widget's: merged key by key over the defaults, text checked for contrast. */
  theme: patchOf(Theme).optional(),
  language: Language.optional().describe('The language the poll is written in (default `en`).'),
  translations: Translations.optional().describe("language → `question` and `options`; in a create body an option is named by its position (`\"0\"`, `\"1\"`…), as its id is given then"),
}).meta({ examples: [{ question: 'Which feature should we build next?', options: [{ text: 'Dark mode' }, { text: 'CSV export' }, { text: 'Slack alerts' }], allow_multiple: false, theme: { primaryColor: '#0f766e', mode: 'auto' } }] });
export type CreatePollBody = z.infer<typeof CreatePollBody>;

/** Options sent with an `id` keep it (and their votes); options without one are new. */
export const UpdatePollBody = z.strictObject({
  question: PollConfig.shape.question.optional(),
  options: z.array(z.strictObject({ id: z.string().max(64).optional(), text: OptionText })).min(2).max(20).optional(),
  allow_multiple: z.boolean().optional(),
  settings: patchOf(PageSettings).optional(),
  theme: patchOf(Theme).optional(),
  language: Language.optional(),
  translations: Translations.optional().describe('language → `question` and `options` (option id → text)'),
  published: z.boolean().optional(),
  /** Sent back unchanged from a GET, or not at all. */
  ...ReadOnly,
}).meta({
  examples: [{ published: true, options: [{ id: 'opt_01JD3Q5V8K2M4N6P8R0S2T4V6X', text: 'Dark mode' }, { id: 'opt_01JD3Q5V8K2M4N6P8R0S2T4V6Y', text: 'CSV export' }, { text: 'Webhooks' }] }],
});
export type UpdatePollBody = z.infer<typeof UpdatePollBody>;

/** The replies to a create and an update, the API's and the dashboard's. */
export const PollCreatedReply = z.object({ id: z.string(), question: z.string(), options: z.array(PollOption), published: z.literal(false), created_at: z.string() });
export const PollUpdatedReply = z.object({ id: z.string(), question: z.string(), published: z.boolean(), updated_at: z.string() });
