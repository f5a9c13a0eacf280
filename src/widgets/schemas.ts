import { z } from 'zod';
import { ReadOnly } from '../embeddables/read-only.js';
import { patchOf } from '../kernel/patch.js';
import { Presentation, PresentationPatch } from '../embeddables/presentation.js';
import { WidgetQuestions } from '../embeddables/questions.js';
import { Flow } from '../embeddables/logic.js';
import { Language, Translations } from '../embeddables/translations.js';

export const WidgetType = z.enum(['feedback', 'nps', 'contact', 'bug_report', 'custom']);
export type WidgetType = z.infer<typeof WidgetType>;

export const TriggerConfig = z.strictObject({
  position: z.enum(['bottom-right', 'bottom-left', 'top-right', 'top-left']).default('bottom-right'),
  icon: z.enum(['chat', 'feedback', 'help', 'star', 'heart']).default('feedback'),
  text: z.string().trim().max(60).default('Feedback'),
  showText: z.boolean().default(true),
  triggerMode: z.enum(['click_toggle', 'scroll', 'exit_intent', 'time_delay']).default('click_toggle'),
  scrollPercentage: z.number().min(0).max(100).default(50),
  timeDelay: z.number().min(0).max(86_400).default(5),
});

/** Everything an owner configures; stored whole in WidgetCreated. */
export const WidgetConfig = z.object({ widget_type: WidgetType, ...Presentation, questions: WidgetQuestions, trigger_config: TriggerConfig, ...Flow, language: Language, translations: Translations });
export type WidgetConfig = z.infer<typeof WidgetConfig>;

export const CreateWidgetBody = z.strictObject({
  widget_type: WidgetType,
  ...PresentationPatch,
  questions: WidgetQuestions.optional(),
  trigger_config: patchOf(TriggerConfig).optional(),
  /** Custom widgets only, as on forms. */
  pages: Flow.pages.optional(),
  logic: Flow.logic.optional(),
  endings: Flow.endings.optional(),
  language: Language.optional().describe('The language the widget is written in (default `en`).'),
  translations: Translations.optional(),
}).meta({
  examples: [
    {
      widget_type: 'nps',
      title: 'How likely are you to recommend us?',
      trigger_config: { position: 'bottom-right', icon: 'star', triggerMode: 'time_delay', timeDelay: 10 },
      theme: { primaryColor: '#0f766e' },
      thank_you_title: 'Thank you!',
      settings: { allowed_domains: ['example.com', '*.example.com'], prevent_duplicates: true },
    },
  ],
});
export type CreateWidgetBody = z.infer<typeof CreateWidgetBody>;

/**
 * Any subset of the configuration plus `published`; nested objects merge key
 * by key. The type is fixed at creation: like the other read-only fields a
 * GET shows, it may be sent unchanged only.
 */
export const UpdateWidgetBody = CreateWidgetBody.partial()
  .extend({ published: z.boolean().optional(), ...ReadOnly })
  .meta({ examples: [{ published: true, trigger_config: { triggerMode: 'scroll', scrollPercentage: 60 } }] });
export type UpdateWidgetBody = z.infer<typeof UpdateWidgetBody>;

/** The replies to a create and an update, the API's and the dashboard's. */
export const WidgetCreatedReply = z.object({ id: z.string(), title: z.string(), widget_type: WidgetType, published: z.literal(false), created_at: z.string() });
export const WidgetUpdatedReply = z.object({ id: z.string(), title: z.string(), published: z.boolean(), updated_at: z.string() });
