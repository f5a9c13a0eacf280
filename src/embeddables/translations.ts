import { z } from 'zod';
import { AppError, type ErrorDetail } from '../kernel/errors.js';

/**
 * The language an object is written in and its translations: the same
 * texts in other languages, each naming what it replaces by id. The embed
 * shows the translation in the visitor's language; what a translation leaves
 * out shows as written.
 */
export const Language = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en, de or pt-BR')
  .describe('A BCP 47 language tag: `de`, `pt-BR`. The embed speaks en, de, fr, es, it, pt, nl, pl, sv, da, ja, zh, ko, ar, he, tr, ru and uk; other languages show their translated texts with English buttons.');

const Short = z.string().trim().min(1).max(200);
const Long = z.string().trim().min(1).max(2000);
// Keys are ids; `__proto__` never is one (no request body may hold it).
const labels = z.record(z.string().max(64), Short);

export const Translation = z.strictObject({
  title: Short.optional(),
  description: Long.optional(),
  thank_you_title: Short.optional(),
  thank_you_message: Long.optional(),
  questions: z
    .record(
      z.string().max(64),
      z.strictObject({
        title: Short.optional(),
        description: Long.optional(),
        choices: labels.optional().describe('choice id → label'),
        rows: labels.optional().describe('matrix row id → label'),
        columns: labels.optional().describe('matrix column id → label'),
        start_label: Short.optional(),
        end_label: Short.optional(),
        text: Long.optional().describe("a consent question's text"),
      }),
    )
    .optional()
    .describe('question id → its texts'),
  endings: z.record(z.string().max(64), z.strictObject({ title: Short.optional(), message: Long.optional() })).optional().describe('ending id → its texts'),
  question: Short.optional().describe("a poll's question"),
  options: labels.optional().describe("a poll's option id → text"),
});
export type Translation = z.infer<typeof Translation>;

export const Translations = z
  .record(Language, Translation)
  .refine((t) => Object.keys(t).length <= 30, 'at most 30 translations')
  .describe('language → the texts in that language, by id; what a translation leaves out shows as written');
export type Translations = z.infer<typeof Translations>;

/** The ids a translation may name. */
export interface Translatable {
  kind: 'form' | 'widget' | 'poll';
  language: string;
  questions?: ReadonlyArray<{ id: string; type: string; choices?: ReadonlyArray<{ id: string }>; rows?: ReadonlyArray<{ id: string }>; columns?: ReadonlyArray<{ id: string }> }>;
  endings?: ReadonlyArray<{ id: string }>;
  options?: ReadonlyArray<{ id: string }>;
}

const ids = (items: ReadonlyArray<{ id: string }> | undefined) => new Set((items ?? []).map((i) => i.id));

/** Each translation's problems: its own language, an id the object does not have, a text its kind has not. */
export function translationProblems(object: Translatable, translations: Translations): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const at = (path: string, message: string) => problems.push({ path: `body.translations.${path}`, message });
  const questions = new Map((object.questions ?? []).map((q) => [q.id, q]));
  const endings = ids(object.endings);
  const options = ids(object.options);
  for (const [lang, tr] of Object.entries(translations)) {
    if (lang.toLowerCase() === object.language.toLowerCase()) at(lang, `is the ${object.kind}'s own language`);
    for (const [id, q] of Object.entries(tr.questions ?? {})) {
      const question = questions.get(id);
      if (!question) {
        at(`${lang}.questions.${id}`, `the ${object.kind} has no question ${id}`);
        continue;
      }
      for (const part of ['choices', 'rows', 'columns'] as const) {
        const known = ids(question[part]);
        for (const key of Object.keys(q[part] ?? {})) if (!known.has(key)) at(`${lang}.questions.${id}.${part}.${key}`, `question ${id} has no ${part === 'choices' ? 'choice' : part.slice(0, -1)} ${key}`);
      }
      if (q.text !== undefined && question.type !== 'consent') at(`${lang}.questions.${id}.text`, `question ${id} is not a consent question`);
    }
    for (const id of Object.keys(tr.endings ?? {})) if (!endings.has(id)) at(`${lang}.endings.${id}`, `the ${object.kind} has no ending ${id}`);
    if (object.kind === 'poll') for (const id of Object.keys(tr.options ?? {})) if (!options.has(id)) at(`${lang}.options.${id}`, `the poll has no option ${id}`);
    const foreign = object.kind === 'poll' ? (['title', 'description', 'thank_you_title', 'thank_you_message', 'questions', 'endings'] as const) : (['question', 'options'] as const);
    for (const key of foreign) if (tr[key] !== undefined) at(`${lang}.${key}`, `a ${object.kind} has no ${key}`);
  }
  return problems;
}

/** 400 naming every translation that does not fit the object. */
export function checkTranslations(object: Translatable, translations: Translations): void {
  const problems = translationProblems(object, translations);
  if (problems.length > 0) throw new AppError('validation_error', `The ${object.kind}'s translations name what it does not have`, problems);
}

/**
 * The translations with what the object no longer has left out: a question,
 * choice or ending removed takes its translated texts with it, so changing
 * a definition never fails for its translations.
 */
export function prunedTranslations(object: Translatable, translations: Translations): Translations {
  const problems = new Set(translationProblems(object, translations).map((p) => p.path.slice('body.translations.'.length)));
  const out: Translations = {};
  for (const [lang, tr] of Object.entries(translations)) {
    if (problems.has(lang)) continue;
    const copy: Translation = { ...tr };
    if (tr.questions) {
      copy.questions = {};
      for (const [id, q] of Object.entries(tr.questions)) {
        if (problems.has(`${lang}.questions.${id}`)) continue;
        const kept = { ...q };
        for (const part of ['choices', 'rows', 'columns'] as const) {
          if (q[part]) kept[part] = Object.fromEntries(Object.entries(q[part]!).filter(([key]) => !problems.has(`${lang}.questions.${id}.${part}.${key}`)));
        }
        if (problems.has(`${lang}.questions.${id}.text`)) delete kept.text;
        copy.questions[id] = kept;
      }
    }
    if (tr.endings) copy.endings = Object.fromEntries(Object.entries(tr.endings).filter(([id]) => !problems.has(`${lang}.endings.${id}`)));
    if (tr.options) copy.options = Object.fromEntries(Object.entries(tr.options).filter(([id]) => !problems.has(`${lang}.options.${id}`)));
    out[lang] = copy;
  }
  return out;
}
