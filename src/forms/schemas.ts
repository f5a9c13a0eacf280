import { z } from 'zod';
import { ReadOnly } from '../embeddables/read-only.js';
import { Presentation, PresentationPatch } from '../presentation.js';
import { FormQuestions } from '../questions.js';

/** D7: a form's questions may hold one consent question, whose record each response keeps. */
const Questions = FormQuestions.refine((questions) => questions.filter((q) => q.type === 'consent').length <= 1, 'a form holds at most one consent question');

export const FormConfig = z.object({ ...Presentation, questions: Questions });
export type FormConfig = z.infer<typeof FormConfig>;

export const CreateFormBody = z.strictObject({ ...PresentationPatch, questions: Questions.optional() }).meta({
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
  ],
});
export type CreateFormBody = z.infer<typeof CreateFormBody>;

/** Any subset plus `published`; the read-only fields a GET shows (and `version`) may be sent unchanged only. */
export const UpdateFormBody = CreateFormBody.partial()
  .extend({ published: z.boolean().optional(), ...ReadOnly, version: z.number().int().optional() })
  .meta({ examples: [{ title: 'Newsletter sign-up (2027)', published: true }] });
export type UpdateFormBody = z.infer<typeof UpdateFormBody>;

/** The replies to a create and an update, the API's and the dashboard's. */
export const FormCreatedReply = z.object({ id: z.string(), title: z.string(), published: z.literal(false), version: z.literal(1), created_at: z.string() });
export const FormUpdatedReply = z.object({ id: z.string(), title: z.string(), published: z.boolean(), version: z.number().int(), updated_at: z.string() });
