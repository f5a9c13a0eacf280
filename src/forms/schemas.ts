import { z } from 'zod';
import { patchOf } from '../patch.js';
import { FormQuestions } from '../questions.js';
import { Settings } from '../submissions/settings.js';
import { Theme } from '../theme.js';

const Title = z.string().trim().min(1).max(200);
const Text = (max: number) => z.string().trim().max(max);

/** D7: a form's questions may hold one consent question, whose record each response keeps. */
const Questions = FormQuestions.refine((questions) => questions.filter((q) => q.type === 'consent').length <= 1, 'a form holds at most one consent question');

export const FormConfig = z.object({
  title: Title,
  description: Text(2000),
  questions: Questions,
  theme: Theme,
  thank_you_title: Text(200),
  thank_you_message: Text(2000),
  settings: Settings,
});
export type FormConfig = z.infer<typeof FormConfig>;

export const CreateFormBody = z.strictObject({
  title: Title,
  description: Text(2000).optional(),
  questions: Questions.optional(),
  theme: patchOf(Theme).optional(),
  thank_you_title: Text(200).optional(),
  thank_you_message: Text(2000).optional(),
  settings: patchOf(Settings).optional(),
}).meta({
  examples: [
    {
      title: 'Newsletter sign-up',
      questions: [
        { id: 'email', type: 'email', title: 'Your email address', required: true },
        { id: 'consent', type: 'consent', title: 'Consent', text: 'I agree that Example Ltd may send me its monthly newsletter. I can unsubscribe at any time.', required: true },
      ],
      settings: { closes_at: '2027-01-31T23:59:59Z' },
    },
  ],
});
export type CreateFormBody = z.infer<typeof CreateFormBody>;

export const UpdateFormBody = CreateFormBody.partial()
  .extend({ published: z.boolean().optional() })
  .meta({ examples: [{ title: 'Newsletter sign-up (2027)', published: true }] });
export type UpdateFormBody = z.infer<typeof UpdateFormBody>;
