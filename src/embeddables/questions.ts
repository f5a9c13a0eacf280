import { z } from 'zod';
// The full metadata build: the server checks a number against each country's real patterns, not its length alone (the `min` build).
import { createRequire } from 'node:module';
import type { CountryCode } from 'libphonenumber-js/max';
import { said, shows } from '../kernel/text.js';
import type { ErrorDetail } from '../kernel/errors.js';
import { isCalendarDay, OPERATORS, type Operator } from './evaluate.js';

// The metadata of every numbering plan is large: loaded on the first phone
// question a process meets, not by every process that starts.
let phoneNumbers: typeof import('libphonenumber-js/max') | undefined;
const phones = () => (phoneNumbers ??= createRequire(import.meta.url)('libphonenumber-js/max') as typeof import('libphonenumber-js/max'));

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
export const MAX_TEXT = 10_000;

/**
 * A condition on the answers before it: `{question, op, value?}`, or
 * `{all: [...]}` / `{any: [...]}` of conditions, nested at most three deep.
 * What each operator means is the evaluator's (src/embeddables/evaluate.ts); the
 * definition's checks say which fit which question.
 */
const ConditionValue = z.union([z.string().max(500), z.number(), z.boolean(), z.array(z.string().max(64)).max(50)]);
const ConditionLeaf = z.strictObject({
  question: QuestionId,
  op: z.enum(OPERATORS as [Operator, ...Operator[]]),
  value: ConditionValue.optional().describe('What the answer is compared with; none for answered and not_answered'),
});
/** A condition as the API takes it: what the evaluator reads, with the values JSON can give. */
export type Condition =
  | { question: string; op: Operator; value?: string | number | boolean | string[] | undefined }
  | { all: Condition[] }
  | { any: Condition[] };
const groupsOf = (inner: z.ZodType<Condition>): z.ZodType<Condition> =>
  z.union([ConditionLeaf, z.strictObject({ all: z.array(inner).min(1).max(20) }), z.strictObject({ any: z.array(inner).min(1).max(20) })]);
/** Named in the API document: one component, which every question's `show_if` and every rule refers to. */
export const Condition: z.ZodType<Condition> = groupsOf(groupsOf(groupsOf(ConditionLeaf))).register(z.globalRegistry, { id: 'Condition' });

const base = {
  id: QuestionId,
  title: Title,
  required: z.boolean().default(false),
  description: z.string().trim().max(2000).optional(),
  /** Shown only when this condition on earlier questions holds; hidden, it is neither required nor answerable. */
  show_if: Condition.optional(),
};

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

const unique = (items: Array<{ id: string }>) => new Set(items.map((item) => item.id)).size === items.length;
/** Choices, rows and columns: `{id, label}` with ids unique within the list. */
const Options = (min: number, max: number, what: string) =>
  z
    .array(z.strictObject({ id: QuestionId, label: said(200) }))
    .min(min)
    .max(max)
    .refine(unique, `${what} ids must be unique`);
const Choices = Options(2, 50, 'choice');

const Day = z.string().refine(isCalendarDay, 'must be a real calendar day as YYYY-MM-DD');

export const StarRatingQuestion = z.strictObject({
  ...base,
  type: z.literal('star_rating'),
  starRatingSettings: z.strictObject({ maxStars: z.number().int().min(1).max(10) }).default({ maxStars: 5 }),
});
export const NpsQuestion = z.strictObject({ ...base, type: z.literal('nps') });
const maxLength = z.number().int().min(1).max(MAX_TEXT).optional();
export const LongTextQuestion = z.strictObject({ ...base, type: z.literal('long_text'), max_length: maxLength });
export const ShortTextQuestion = z.strictObject({ ...base, type: z.literal('short_text'), max_length: maxLength });
export const EmailQuestion = z.strictObject({ ...base, type: z.literal('email') });
export const PhoneQuestion = z.strictObject({
  ...base,
  type: z.literal('phone'),
  default_country: z
    .string()
    .refine((code) => /^[A-Z]{2}$/.test(code) && phones().isSupportedCountry(code), 'must be an ISO 3166 alpha-2 country code with a telephone numbering plan, in capitals (GB, US, DE)')
    .optional(),
});
export const UrlQuestion = z.strictObject({ ...base, type: z.literal('url') });
export const NumberQuestion = z
  .strictObject({ ...base, type: z.literal('number'), min: z.number().optional(), max: z.number().optional(), integer: z.boolean().optional() })
  .refine((q) => q.min === undefined || q.max === undefined || q.min <= q.max, { message: 'must not be above max', path: ['min'] });
export const DateQuestion = z
  .strictObject({ ...base, type: z.literal('date'), min: Day.optional(), max: Day.optional() })
  .refine((q) => q.min === undefined || q.max === undefined || q.min <= q.max, { message: 'must not be after max', path: ['min'] });
export const SingleChoiceQuestion = z.strictObject({
  ...base,
  type: z.literal('single_choice'),
  choices: Choices,
  /** Absent: radio buttons up to 6 choices, a dropdown beyond. */
  display: z.enum(['radio', 'dropdown']).optional(),
});
export const MultipleChoiceQuestion = z
  .strictObject({
    ...base,
    type: z.literal('multiple_choice'),
    choices: Choices,
    min_selected: z.number().int().min(1).optional(),
    max_selected: z.number().int().min(1).optional(),
  })
  .refine((q) => q.min_selected === undefined || q.min_selected <= q.choices.length, { message: 'must not be above the number of choices', path: ['min_selected'] })
  .refine((q) => q.min_selected === undefined || q.max_selected === undefined || q.min_selected <= q.max_selected, { message: 'must not be above max_selected', path: ['min_selected'] });
export const OpinionScaleQuestion = z.strictObject({
  ...base,
  type: z.literal('opinion_scale'),
  start: z.number().int().min(0, 'must be 0 or 1').max(1, 'must be 0 or 1'),
  end: z.number().int().min(2).max(10),
  start_label: z.string().trim().max(100).optional(),
  end_label: z.string().trim().max(100).optional(),
});
export const YesNoQuestion = z.strictObject({ ...base, type: z.literal('yes_no') });
export const RankingQuestion = z.strictObject({ ...base, type: z.literal('ranking'), choices: Options(2, 20, 'choice') });
export const MatrixQuestion = z.strictObject({ ...base, type: z.literal('matrix'), rows: Options(1, 20, 'row'), columns: Options(2, 10, 'column') });
/** Text shown between questions; it takes no answer, so it cannot be required. */
export const StatementQuestion = z.strictObject({
  ...base,
  type: z.literal('statement'),
  required: z.boolean().default(false).refine((required) => !required, 'must be false: a statement takes no answer'),
});
/** Bug reports: a fixed severity scale, so reports from every site compare. */
export const SeverityQuestion = z.strictObject({ ...base, type: z.literal('severity') });
/** D7: forms only; its answer is a boolean and the response keeps a consent record. */
export const ConsentQuestion = z.strictObject({ ...base, type: z.literal('consent'), text: said(5000) });

/**
 * Each type as the API document names it: one component of its own, which
 * every operation that takes or answers questions refers to, rather than
 * a copy of every type in each (the document was 8 MB, and /docs took 13 s
 * to show on a phone).
 */

const widgetQuestionTypes = [
  StarRatingQuestion,
  NpsQuestion,
  LongTextQuestion,
  ShortTextQuestion,
  EmailQuestion,
  PhoneQuestion,
  UrlQuestion,
  NumberQuestion,
  DateQuestion,
  SingleChoiceQuestion,
  MultipleChoiceQuestion,
  OpinionScaleQuestion,
  YesNoQuestion,
  RankingQuestion,
  MatrixQuestion,
  StatementQuestion,
  SeverityQuestion,
] as const;
for (const schema of [...widgetQuestionTypes, ConsentQuestion]) {
  // `star_rating` is StarRatingQuestion.
  const name = schema.shape.type.value.replace(/(?:^|_)(\w)/g, (_: string, letter: string) => letter.toUpperCase());
  z.globalRegistry.add(schema, { id: `${name}Question` });
}

/** Every question type a form takes; widgets of type `custom` take all but `consent`. */
export const QUESTION_TYPES = [...widgetQuestionTypes.map((schema) => schema.shape.type.value), 'consent'] as const;

const uniqueIds = (questions: Array<{ id: string }>) => unique(questions);

export const WidgetQuestion = z.discriminatedUnion('type', widgetQuestionTypes);
export const WidgetQuestions = z.array(WidgetQuestion).max(50).refine(uniqueIds, 'question ids must be unique');
export const FormQuestion = z.discriminatedUnion('type', [...widgetQuestionTypes, ConsentQuestion]);
export const FormQuestions = z.array(FormQuestion).max(200).refine(uniqueIds, 'question ids must be unique');

export type FormQuestion = z.infer<typeof FormQuestion>;
export type WidgetQuestion = z.infer<typeof WidgetQuestion>;

/** What an answer may be, by type: text, a number, a boolean, choice ids in order, or a matrix's column id by row id. */
export type Answer = string | number | boolean | string[] | { [row: string]: string };
export const Answer = z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.record(z.string(), z.string())]);
export const Answers = z.record(z.string(), Answer);
export type Answers = z.infer<typeof Answers>;

const EMAIL = z.email();
const MAX_URL = 2048;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const ids = (options: ReadonlyArray<{ id: string }>) => options.map((o) => o.id).join(', ');

/** An absolute http or https URL with a host, as typed (up to 2,048 characters). */
export function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_URL || !/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Distinct choice ids, each one of `choices`; why not, or undefined. */
function choiceIdsProblem(value: unknown, choices: ReadonlyArray<{ id: string }>): string | undefined {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return 'must be a list of choice ids';
  const known = new Set(choices.map((c) => c.id));
  const unknown = value.find((v) => !known.has(v));
  if (unknown !== undefined) return `holds ${JSON.stringify(unknown)}, which is not one of ${ids(choices)}`;
  if (new Set(value).size !== value.length) return 'must not name a choice twice';
  return undefined;
}

const integerIn = (value: unknown, from: number, to: number) =>
  Number.isInteger(value) && (value as number) >= from && (value as number) <= to ? undefined : `must be a whole number from ${from} to ${to}`;

/** The answer as it is stored (a phone number in E.164), or why it does not fit its question. */
function check(question: FormQuestion, value: unknown): { why: string } | { answer: Answer } {
  const why = (problem: string | undefined) => (problem === undefined ? { answer: value as Answer } : { why: problem });
  switch (question.type) {
    case 'star_rating':
      return why(integerIn(value, 1, question.starRatingSettings.maxStars));
    case 'nps':
      return why(integerIn(value, 0, 10));
    case 'opinion_scale':
      return why(integerIn(value, question.start, question.end));
    case 'long_text':
    case 'short_text': {
      if (typeof value !== 'string') return why('must be text');
      const max = question.max_length ?? MAX_TEXT;
      return why(characters(value) <= max ? undefined : `must be at most ${max} characters`);
    }
    case 'email':
      return why(typeof value === 'string' && characters(value) <= 320 && EMAIL.safeParse(value).success ? undefined : 'must be an email address');
    case 'phone': {
      if (typeof value !== 'string' || value.length > 64) return why('must be a phone number');
      const number = phones().parsePhoneNumberFromString(value, question.default_country as CountryCode | undefined);
      if (!number?.isValid()) {
        return why(question.default_country ? `must be a phone number (in ${question.default_country}, or international starting with +)` : 'must be an international phone number starting with + and the country code');
      }
      return { answer: number.number };
    }
    case 'url':
      return why(isWebUrl(value) ? undefined : `must be an absolute http or https URL of at most ${MAX_URL} characters`);
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return why('must be a number');
      if (question.integer && !Number.isInteger(value)) return why('must be a whole number');
      if (question.min !== undefined && value < question.min) return why(`must be at least ${question.min}`);
      if (question.max !== undefined && value > question.max) return why(`must be at most ${question.max}`);
      return why(undefined);
    }
    case 'date': {
      if (!isCalendarDay(value)) return why('must be a real calendar day as YYYY-MM-DD');
      if (question.min !== undefined && value < question.min) return why(`must be ${question.min} or later`);
      if (question.max !== undefined && value > question.max) return why(`must be ${question.max} or earlier`);
      return why(undefined);
    }
    case 'single_choice':
      return why(typeof value === 'string' && question.choices.some((c) => c.id === value) ? undefined : `must be one of ${ids(question.choices)}`);
    case 'multiple_choice': {
      const problem = choiceIdsProblem(value, question.choices);
      if (problem) return why(problem);
      const count = (value as string[]).length;
      if (question.min_selected !== undefined && count < question.min_selected) return why(`must select at least ${question.min_selected}`);
      if (question.max_selected !== undefined && count > question.max_selected) return why(`must select at most ${question.max_selected}`);
      return why(undefined);
    }
    case 'ranking': {
      const problem = choiceIdsProblem(value, question.choices);
      if (problem) return why(problem);
      return why((value as string[]).length === question.choices.length ? undefined : `must rank every choice once: ${ids(question.choices)}`);
    }
    case 'matrix': {
      if (!isObject(value)) return why('must be an object of column ids by row id');
      const rows = new Set(question.rows.map((r) => r.id));
      const columns = new Set(question.columns.map((c) => c.id));
      for (const [row, column] of Object.entries(value)) {
        if (!rows.has(row)) return why(`has row ${JSON.stringify(row)}, which is not one of ${ids(question.rows)}`);
        if (typeof column !== 'string' || !columns.has(column)) return why(`row ${row} must be one of ${ids(question.columns)}`);
      }
      if (question.required) {
        const missing = question.rows.filter((r) => !Object.hasOwn(value, r.id));
        if (missing.length > 0) return why(`must answer every row; missing ${ids(missing)}`);
      }
      return why(undefined);
    }
    case 'yes_no':
      return why(typeof value === 'boolean' ? undefined : 'must be true or false');
    case 'statement':
      return why('is a statement, which takes no answer');
    case 'severity':
      return why(typeof value === 'string' && (SEVERITIES as readonly string[]).includes(value) ? undefined : `must be one of ${SEVERITIES.join(', ')}`);
    case 'consent':
      if (typeof value !== 'boolean') return why('must be true or false');
      return why(question.required && !value ? 'must be given (true) to submit this form' : undefined);
  }
}

/** No answer: absent, null, text that shows nothing, an empty list or an empty matrix. */
const isBlank = (value: unknown) =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && !shows(value)) ||
  (Array.isArray(value) && value.length === 0) ||
  (isObject(value) && Object.keys(value).length === 0);

/**
 * Checks every answer against its question: required ones present, no
 * unknown question ids, nothing for a statement, each value of the right
 * type and range. Blank optional answers are dropped rather than stored;
 * phone numbers are stored in E.164.
 */
export function validateAnswers(questions: FormQuestion[], answers: Record<string, unknown>): { answers: Answers; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const valid: Answers = {};
  const known = new Set(questions.map((q) => q.id));
  for (const id of Object.keys(answers)) {
    if (!known.has(id)) details.push({ path: `answers.${id}`, message: 'is not a question of this object' });
  }
  for (const question of questions) {
    const present = Object.hasOwn(answers, question.id);
    const value = present ? answers[question.id] : undefined;
    if (question.type === 'statement') {
      // Any value at all, blank included: a client that sends one misunderstands the form.
      if (present) details.push({ path: `answers.${question.id}`, message: 'is a statement, which takes no answer' });
      continue;
    }
    if (isBlank(value)) {
      if (question.required) details.push({ path: `answers.${question.id}`, message: 'is required' });
      continue;
    }
    const checked = check(question, value);
    if ('why' in checked) details.push({ path: `answers.${question.id}`, message: checked.why });
    else valid[question.id] = checked.answer;
  }
  return { answers: valid, details };
}
