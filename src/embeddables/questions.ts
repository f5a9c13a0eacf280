import { z } from 'zod';
import { said, shows } from '../kernel/text.js';
import type { ErrorDetail } from '../kernel/errors.js';

/**
 * The question model shared by widgets and forms, and the validation of
 * answers against it. One schema per question type; answers are checked by
 * the same table so the two can never disagree.
 */
export const QuestionId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -')
  // Answers are keyed by question id, and no request body may hold a `__proto__` key: a question of that id could never be answered.
  .refine((id) => id !== '__proto__', 'must not be __proto__, which no answer could name');
const Title = said(500);
const base = { id: QuestionId, title: Title, required: z.boolean().default(false) };

export const MAX_TEXT = 10_000;

/**
 * A text's length in characters (code points), as zod counts a title's: an
 * emoji is one character, though JavaScript's `length` counts it as two.
 */
export function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

export const StarRatingQuestion = z.strictObject({
  ...base,
  type: z.literal('star_rating'),
  starRatingSettings: z.strictObject({ maxStars: z.number().int().min(1).max(10) }).default({ maxStars: 5 }),
});
export const NpsQuestion = z.strictObject({ ...base, type: z.literal('nps') });
export const LongTextQuestion = z.strictObject({ ...base, type: z.literal('long_text') });
export const ShortTextQuestion = z.strictObject({ ...base, type: z.literal('short_text') });
export const EmailQuestion = z.strictObject({ ...base, type: z.literal('email') });
export const SingleChoiceQuestion = z.strictObject({
  ...base,
  type: z.literal('single_choice'),
  choices: z
    .array(z.strictObject({ id: QuestionId, label: said(200) }))
    .min(2)
    .max(50)
    .refine((choices) => new Set(choices.map((c) => c.id)).size === choices.length, 'choice ids must be unique'),
});
/** Bug reports: a fixed severity scale, so reports from every site compare. */
export const SeverityQuestion = z.strictObject({ ...base, type: z.literal('severity') });
/** D7: forms only; its answer is a boolean and the response keeps a consent record. */
export const ConsentQuestion = z.strictObject({ ...base, type: z.literal('consent'), text: said(5000) });

const widgetQuestionTypes = [
  StarRatingQuestion,
  NpsQuestion,
  LongTextQuestion,
  ShortTextQuestion,
  EmailQuestion,
  SingleChoiceQuestion,
  SeverityQuestion,
] as const;

const uniqueIds = (questions: Array<{ id: string }>) => new Set(questions.map((q) => q.id)).size === questions.length;

export const WidgetQuestion = z.discriminatedUnion('type', widgetQuestionTypes);
export const WidgetQuestions = z.array(WidgetQuestion).max(50).refine(uniqueIds, 'question ids must be unique');
export const FormQuestion = z.discriminatedUnion('type', [...widgetQuestionTypes, ConsentQuestion]);
export const FormQuestions = z.array(FormQuestion).max(200).refine(uniqueIds, 'question ids must be unique');

export type FormQuestion = z.infer<typeof FormQuestion>;
export type WidgetQuestion = z.infer<typeof WidgetQuestion>;

export type Answer = string | number | boolean;
export const Answers = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
export type Answers = z.infer<typeof Answers>;

const EMAIL = z.email();

/** Why an answer does not fit its question, or undefined when it does. */
function problem(question: FormQuestion, value: unknown): string | undefined {
  switch (question.type) {
    case 'star_rating': {
      const max = question.starRatingSettings.maxStars;
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max
        ? undefined
        : `must be a whole number from 1 to ${max}`;
    }
    case 'nps':
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 10
        ? undefined
        : 'must be a whole number from 0 to 10';
    case 'long_text':
    case 'short_text':
      if (typeof value !== 'string') return 'must be text';
      return characters(value) <= MAX_TEXT ? undefined : `must be at most ${MAX_TEXT} characters`;
    case 'email':
      return typeof value === 'string' && characters(value) <= 320 && EMAIL.safeParse(value).success
        ? undefined
        : 'must be an email address';
    case 'single_choice':
      return typeof value === 'string' && question.choices.some((c) => c.id === value)
        ? undefined
        : `must be one of ${question.choices.map((c) => c.id).join(', ')}`;
    case 'severity':
      return typeof value === 'string' && (SEVERITIES as readonly string[]).includes(value)
        ? undefined
        : `must be one of ${SEVERITIES.join(', ')}`;
    case 'consent':
      if (typeof value !== 'boolean') return 'must be true or false';
      return question.required && !value ? 'must be given (true) to submit this form' : undefined;
  }
}

const isBlank = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && !shows(value));

/**
 * Checks every answer against its question: required ones present, no
 * unknown question ids, each value of the right type and range. Blank
 * optional answers are dropped rather than stored.
 */
export function validateAnswers(questions: FormQuestion[], answers: Record<string, unknown>): { answers: Answers; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const valid: Answers = {};
  const known = new Set(questions.map((q) => q.id));
  for (const id of Object.keys(answers)) {
    if (!known.has(id)) details.push({ path: `answers.${id}`, message: 'is not a question of this object' });
  }
  for (const question of questions) {
    const value = Object.hasOwn(answers, question.id) ? answers[question.id] : undefined;
    if (isBlank(value)) {
      if (question.required) details.push({ path: `answers.${question.id}`, message: 'is required' });
      continue;
    }
    const why = problem(question, value);
    if (why) details.push({ path: `answers.${question.id}`, message: why });
    else valid[question.id] = value as Answer;
  }
  return { answers: valid, details };
}
