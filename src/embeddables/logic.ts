import { z } from 'zod';
import { said } from '../kernel/text.js';
import { AppError } from '../kernel/errors.js';
import { logicProblems, type LogicForm } from './evaluate.js';
import { Condition, isWebUrl, QuestionId } from './questions.js';

/**
 * Pages, the rules that jump between them and the endings they may reach,
 * as forms and custom widgets take them. Their meaning is the evaluator's
 * (src/embeddables/evaluate.ts), which the server, the embed and the dashboard's
 * preview all run; this is their shape in the API and the check that a
 * definition is sound.
 */
export const Page = z.strictObject({
  id: QuestionId.describe('Unique among the pages and endings; what rules name'),
  title: z.string().trim().max(200).optional(),
  question_ids: z.array(QuestionId).min(1).max(200).describe('The questions on this page, in order; each question of the definition is on exactly one page'),
});
export const Pages = z
  .array(Page)
  .max(50)
  .describe('The pages in order. Empty: one page, of id `page_1`, holding every question in order.');

export const Rule = z.strictObject({
  page: QuestionId.describe('The page this rule is read on leaving'),
  if: Condition,
  go_to: QuestionId.describe('A later page or an ending'),
});
export const Rules = z
  .array(Rule)
  .max(200)
  .describe(
    'On leaving a page, the first of its rules whose condition holds sends the visitor to `go_to`; when none holds, to the next page, and after the last page to the default ending (`thank_you_title`, `thank_you_message`, `redirect_url`).',
  );

export const Ending = z.strictObject({
  id: QuestionId.describe('Unique among the pages and endings'),
  title: said(200),
  message: z.string().trim().max(2000),
  redirect_url: z.string().trim().refine(isWebUrl, 'must be an absolute http or https URL of at most 2048 characters').optional(),
});
export const Endings = z.array(Ending).max(20);

/** How a form is laid out: a page at a time (`all`), or one question at a time (`one_by_one`). */
export const PresentationStyle = z.enum(['all', 'one_by_one']);

/** The fields, in a definition as stored whole (empty lists: none). */
export const Flow = { pages: Pages, logic: Rules, endings: Endings };

/**
 * 400 `validation_error` when the definition's pages, conditions, rules or
 * endings break a rule (each question on exactly one page, no unknown id, no
 * jump backwards, no condition on a later question, an operator that fits
 * its question), a detail naming each.
 */
export function checkFlow(definition: LogicForm, what: 'form' | 'widget'): void {
  const problems = logicProblems(definition);
  if (problems.length > 0) {
    throw new AppError(
      'validation_error',
      `The ${what}'s pages, conditions or endings break a rule`,
      problems.map((p) => ({ path: `body.${p.path}`, message: p.message })),
    );
  }
}

/** Whether a definition uses any of it (a question's `show_if` included). */
export const usesFlow = (definition: LogicForm): boolean =>
  (definition.pages?.length ?? 0) > 0 || (definition.logic?.length ?? 0) > 0 || (definition.endings?.length ?? 0) > 0 || definition.questions.some((q) => q.show_if !== undefined);
