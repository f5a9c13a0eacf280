/**
 * The one evaluator of a form's pages, conditions and endings. The server
 * walks a submission's path with it, and the embed script (and so the
 * dashboard's preview, which runs the embed) carries this very module,
 * bundled into it at start-up and by the build: what a visitor is shown and
 * what the server accepts cannot disagree.
 *
 * It imports nothing, reads no clock and throws on no input: a definition
 * the API would refuse still evaluates to some path (bad jumps are ignored),
 * so the embed never breaks on one; `logicProblems` is what refuses it.
 *
 * Rules, in order:
 * - Pages: `pages` in order, each question on exactly one; absent, one page
 *   of id `page_1` holding every question in order. A question's place is
 *   its page's, then its place in `question_ids`.
 * - A question with `show_if` is shown when the condition holds; a hidden
 *   question is neither required nor answerable, and its answer counts as
 *   absent in every condition.
 * - Leaving a page, the first rule of `logic` for that page whose condition
 *   holds sends the visitor to its `go_to` (a later page or an ending); no
 *   rule holds: the next page, and after the last page the default ending
 *   (`null`).
 * - Conditions only read answers of questions shown on pages visited before
 *   (and, for `show_if`, earlier on the same page), so answers left behind
 *   on a page the visitor skipped after going back change nothing.
 */

export type Answers = Record<string, unknown>;
export type Operator = 'equals' | 'not_equals' | 'contains' | 'greater_than' | 'less_than' | 'answered' | 'not_answered';
export type Condition = { question: string; op: Operator; value?: unknown } | { all: Condition[] } | { any: Condition[] };
export interface LogicQuestion {
  id: string;
  type: string;
  required?: boolean;
  show_if?: Condition;
  /** Choice ids, when the type has them: conditions are checked against them. */
  choices?: ReadonlyArray<{ id: string }>;
}
export interface LogicPage {
  id: string;
  title?: string;
  question_ids: string[];
}
export interface LogicRule {
  page: string;
  if: Condition;
  go_to: string;
}
export interface LogicEnding {
  id: string;
  title: string;
  message: string;
  redirect_url?: string;
}
export interface LogicForm {
  questions: LogicQuestion[];
  pages?: LogicPage[];
  logic?: LogicRule[];
  endings?: LogicEnding[];
}

/** The id of the one page a form without `pages` has. */
export const DEFAULT_PAGE_ID = 'page_1';

export const OPERATORS: readonly Operator[] = ['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'answered', 'not_answered'];

/** White space and characters that show nothing (format characters, Hangul fillers, blank Braille): a text of only these is no answer. */
const INVISIBLE = /^[\s\p{Cf}\u115F\u1160\u2800\u3164\uFFA0]*$/u;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar day as `YYYY-MM-DD` that exists (no 2026-02-30): a date answer's, and a condition's on one. */
export function isCalendarDay(value: unknown): value is string {
  if (typeof value !== 'string' || !DAY.test(value)) return false;
  const [y, m, d] = value.split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const own = (record: object, key: string) => Object.prototype.hasOwnProperty.call(record, key);

/** No answer: absent, null, a text that shows nothing, an empty list or an empty object. */
export function isBlank(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (typeof value === 'string' && INVISIBLE.test(value)) ||
    (Array.isArray(value) && value.length === 0) ||
    (isObject(value) && Object.keys(value).length === 0)
  );
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    // A multiple choice equals a list holding the same choices in any order, or a single choice id when it is the only one selected.
    const other = Array.isArray(b) ? b : [b];
    return a.length === other.length && a.every((item) => other.some((o) => same(item, o))) && other.every((o) => a.some((item) => same(item, o)));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => own(b, key) && same(a[key], b[key]));
  }
  return false;
}

/** Two comparable values: numbers with numbers, days (`YYYY-MM-DD`) with days; otherwise none. */
function compare(answer: unknown, value: unknown): number | undefined {
  if (typeof answer === 'number' && typeof value === 'number' && Number.isFinite(answer) && Number.isFinite(value)) return answer - value;
  if (typeof answer === 'string' && typeof value === 'string' && DAY.test(answer) && DAY.test(value)) return answer < value ? -1 : answer > value ? 1 : 0;
  return undefined;
}

function test(op: Operator, answer: unknown, value: unknown): boolean {
  const answered = !isBlank(answer);
  switch (op) {
    case 'answered':
      return answered;
    case 'not_answered':
      return !answered;
    case 'equals':
      return answered && same(answer, value);
    case 'not_equals':
      return !(answered && same(answer, value));
    case 'contains':
      if (!answered) return false;
      if (Array.isArray(answer)) return answer.some((item) => same(item, value));
      // Text contains text whatever its case, as a visitor reads it.
      return typeof answer === 'string' && typeof value === 'string' && answer.toLowerCase().includes(value.toLowerCase());
    case 'greater_than':
    case 'less_than': {
      if (!answered) return false;
      const order = compare(answer, value);
      return order !== undefined && (op === 'greater_than' ? order > 0 : order < 0);
    }
    default:
      return false;
  }
}

/** Whether the condition holds for these answers. An unknown operator or shape holds never (an empty `all` always, an empty `any` never). */
export function holds(condition: Condition, answers: Answers): boolean {
  if (!isObject(condition)) return false;
  if (Array.isArray((condition as { all?: unknown }).all)) return (condition as { all: Condition[] }).all.every((c) => holds(c, answers));
  if (Array.isArray((condition as { any?: unknown }).any)) return (condition as { any: Condition[] }).any.some((c) => holds(c, answers));
  const { question, op, value } = condition as { question?: unknown; op?: unknown; value?: unknown };
  if (typeof question !== 'string' || typeof op !== 'string') return false;
  const answer = isObject(answers) && own(answers, question) ? answers[question] : undefined;
  return test(op as Operator, answer, value);
}

/** The form's pages in order; without `pages`, one page (`page_1`) holding every question. */
export function pagesOf(form: LogicForm): LogicPage[] {
  if (form.pages && form.pages.length > 0) return form.pages;
  return [{ id: DEFAULT_PAGE_ID, question_ids: form.questions.map((q) => q.id) }];
}

interface Step {
  page: string;
  shown: string[];
  /** The answers conditions may read on leaving this page: those of questions shown so far. */
  known: Answers;
}

/** The questions of a page shown with what is known before it, and what is known after it. */
function showPage(form: LogicForm, page: LogicPage, before: Answers, answers: Answers): { shown: string[]; known: Answers } {
  const byId = new Map(form.questions.map((q) => [q.id, q] as const));
  const known: Answers = { ...before };
  const shown: string[] = [];
  for (const id of page.question_ids) {
    const question = byId.get(id);
    if (!question) continue;
    if (question.show_if !== undefined && !holds(question.show_if, known)) continue;
    shown.push(id);
    if (isObject(answers) && own(answers, id)) known[id] = answers[id];
  }
  return { shown, known };
}

/** Where the visitor goes from page `index`: the first rule that holds and jumps forward, else the next page, else the default ending (`null`). */
function leave(form: LogicForm, pages: LogicPage[], index: number, known: Answers): { index: number } | { ending: string | null } {
  const pageId = pages[index]!.id;
  const endings = new Set((form.endings ?? []).map((e) => e.id));
  for (const rule of form.logic ?? []) {
    if (rule.page !== pageId || !holds(rule.if, known)) continue;
    const target = pages.findIndex((p) => p.id === rule.go_to);
    if (target > index) return { index: target };
    if (target === -1 && endings.has(rule.go_to)) return { ending: rule.go_to };
    // A jump backwards or to nothing is refused when the form is saved; were one stored, it is passed over.
  }
  return index + 1 < pages.length ? { index: index + 1 } : { ending: null };
}

/** The visitor's path from the first page: every page visited, what each showed, and the ending. */
function trace(form: LogicForm, answers: Answers): { steps: Step[]; ending: string | null } {
  const pages = pagesOf(form);
  const steps: Step[] = [];
  let known: Answers = {};
  let index = 0;
  // Every move goes forward, so the walk ends after at most one visit of each page.
  for (;;) {
    const page = pages[index]!;
    const shown = showPage(form, page, known, answers);
    known = shown.known;
    steps.push({ page: page.id, shown: shown.shown, known });
    const to = leave(form, pages, index, known);
    if ('ending' in to) return { steps, ending: to.ending };
    index = to.index;
  }
}

/** A page off the visitor's path (a preview may show any page): as it shows with the answers to every other page as they are. */
function offPath(form: LogicForm, page: LogicPage, answers: Answers): { shown: string[]; known: Answers } {
  const before: Answers = {};
  if (isObject(answers)) for (const id of Object.keys(answers)) if (!page.question_ids.includes(id)) before[id] = answers[id];
  return showPage(form, page, before, answers);
}

/** The ids of the questions the page shows for these answers. */
export function shownOn(form: LogicForm, pageId: string, answers: Answers): string[] {
  const step = trace(form, answers).steps.find((s) => s.page === pageId);
  if (step) return step.shown;
  const page = pagesOf(form).find((p) => p.id === pageId);
  return page ? offPath(form, page, answers).shown : [];
}

/** Where the visitor goes on leaving the page: a page, or an ending (`null`: the default one). */
export function next(form: LogicForm, pageId: string, answers: Answers): { page: string } | { ending: string | null } {
  const pages = pagesOf(form);
  const index = pages.findIndex((p) => p.id === pageId);
  if (index === -1) return { ending: null };
  const step = trace(form, answers).steps.find((s) => s.page === pageId);
  const to = leave(form, pages, index, step ? step.known : offPath(form, pages[index]!, answers).known);
  return 'ending' in to ? to : { page: pages[to.index]!.id };
}

/** The visitor's path: the pages visited in order, the questions shown on them in order, and the ending (`null`: the default one). */
export function walk(form: LogicForm, answers: Answers): { pages: string[]; questions: string[]; ending: string | null } {
  const { steps, ending } = trace(form, answers);
  return { pages: steps.map((s) => s.page), questions: steps.flatMap((s) => s.shown), ending };
}

const NUMERIC = new Set(['number', 'star_rating', 'nps', 'opinion_scale']);
const TEXT = new Set(['short_text', 'long_text', 'email', 'phone', 'url']);
const CHOICES = new Set(['single_choice', 'multiple_choice', 'ranking']);

/** Why `op` with `value` cannot be asked of a question of this type, or undefined. */
function operatorProblem(question: LogicQuestion, op: Operator, value: unknown): string | undefined {
  const type = question.type;
  if (op === 'answered' || op === 'not_answered') return type === 'statement' ? 'a statement takes no answer, so no condition can ask about it' : undefined;
  if (type === 'statement') return 'a statement takes no answer, so no condition can ask about it';
  if (value === undefined) return `${op} needs a value`;
  const choiceIds = question.choices ? new Set(question.choices.map((c) => c.id)) : undefined;
  const unknownChoice = (v: unknown) => (choiceIds && typeof v === 'string' && !choiceIds.has(v) ? `${JSON.stringify(v)} is not a choice of ${question.id}` : undefined);
  switch (op) {
    case 'greater_than':
    case 'less_than':
      if (NUMERIC.has(type)) return typeof value === 'number' && Number.isFinite(value) ? undefined : `${op} on a ${type} question needs a number`;
      if (type === 'date') return isCalendarDay(value) ? undefined : `${op} on a date question needs a real calendar day as YYYY-MM-DD`;
      return `${op} applies to numbers, scales, ratings, NPS and dates, not to a ${type} question`;
    case 'contains':
      if (type === 'multiple_choice' || type === 'ranking') return typeof value === 'string' ? unknownChoice(value) : 'contains on a choice list needs a choice id';
      if (TEXT.has(type)) return typeof value === 'string' && value !== '' ? undefined : 'contains on a text needs a text';
      return `contains applies to multiple choice and text questions, not to a ${type} question`;
    default: {
      // equals, not_equals
      if (NUMERIC.has(type)) return typeof value === 'number' ? undefined : `${op} on a ${type} question needs a number`;
      if (type === 'yes_no' || type === 'consent') return typeof value === 'boolean' ? undefined : `${op} on a ${type} question needs true or false`;
      if (type === 'date') return isCalendarDay(value) ? undefined : `${op} on a date question needs a real calendar day as YYYY-MM-DD`;
      if (type === 'multiple_choice' || type === 'ranking') {
        const items = Array.isArray(value) ? value : [value];
        if (!items.every((v) => typeof v === 'string')) return `${op} on a choice list needs a choice id or a list of them`;
        return items.map(unknownChoice).find((p) => p !== undefined);
      }
      if (type === 'matrix') return `${op} does not apply to a matrix question; use answered or not_answered`;
      if (typeof value !== 'string') return `${op} on a ${type} question needs a text`;
      return CHOICES.has(type) ? unknownChoice(value) : undefined;
    }
  }
}

/**
 * What is wrong with a definition's pages, conditions, rules and endings,
 * each with the path of the field at fault; none when it is sound. `before`
 * is where the condition sits: it may read only questions placed before it.
 */
export function logicProblems(form: LogicForm): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const questions = new Map(form.questions.map((q) => [q.id, q] as const));
  const pages = pagesOf(form);
  const explicit = form.pages !== undefined && form.pages.length > 0;
  /** Each question's place: its page's index, and its place overall. */
  const place = new Map<string, { page: number; order: number }>();
  const pageIndex = new Map<string, number>();
  let order = 0;
  pages.forEach((page, p) => {
    if (pageIndex.has(page.id)) problems.push({ path: `pages.${p}.id`, message: `page id ${page.id} is used by two pages` });
    else pageIndex.set(page.id, p);
    if (explicit && page.question_ids.length === 0) problems.push({ path: `pages.${p}.question_ids`, message: `page ${page.id} holds no question` });
    page.question_ids.forEach((id, i) => {
      if (!questions.has(id)) problems.push({ path: `pages.${p}.question_ids.${i}`, message: `${id} is not a question of this form` });
      else if (place.has(id)) problems.push({ path: `pages.${p}.question_ids.${i}`, message: `question ${id} is on two pages; each question is on exactly one page` });
      else place.set(id, { page: p, order: order++ });
    });
  });
  form.questions.forEach((q, i) => {
    if (!place.has(q.id)) problems.push({ path: `questions.${i}.id`, message: `question ${q.id} is on no page; each question is on exactly one page` });
  });
  const endings = new Set<string>();
  (form.endings ?? []).forEach((ending, i) => {
    if (endings.has(ending.id)) problems.push({ path: `endings.${i}.id`, message: `ending id ${ending.id} is used by two endings` });
    if (pageIndex.has(ending.id)) problems.push({ path: `endings.${i}.id`, message: `${ending.id} names a page and an ending; a jump must know which` });
    endings.add(ending.id);
  });

  /** A condition's problems; `reads(id)` says why it may not read that question, or undefined. */
  const checkCondition = (condition: Condition, path: string, reads: (id: string) => string | undefined, depth: number): void => {
    if (depth > 10) {
      problems.push({ path, message: 'conditions nest at most 10 deep' });
      return;
    }
    if (!isObject(condition)) {
      problems.push({ path, message: 'must be a condition' });
      return;
    }
    for (const key of ['all', 'any'] as const) {
      const list = (condition as Record<string, unknown>)[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length === 0) problems.push({ path: `${path}.${key}`, message: `${key} needs at least one condition` });
      else list.forEach((c, i) => checkCondition(c as Condition, `${path}.${key}.${i}`, reads, depth + 1));
      return;
    }
    const { question, op, value } = condition as { question?: unknown; op?: unknown; value?: unknown };
    const target = typeof question === 'string' ? questions.get(question) : undefined;
    if (!target) {
      problems.push({ path: `${path}.question`, message: `${String(question)} is not a question of this form` });
      return;
    }
    if (!OPERATORS.includes(op as Operator)) {
      problems.push({ path: `${path}.op`, message: `must be one of ${OPERATORS.join(', ')}` });
      return;
    }
    const why = reads(target.id);
    if (why) problems.push({ path: `${path}.question`, message: why });
    const opProblem = operatorProblem(target, op as Operator, value);
    if (opProblem) problems.push({ path: `${path}.value`, message: opProblem });
  };

  form.questions.forEach((q, i) => {
    if (q.show_if === undefined) return;
    const own = place.get(q.id);
    checkCondition(q.show_if, `questions.${i}.show_if`, (id) => {
      if (id === q.id) return `the condition of ${q.id} reads ${q.id} itself; it may read only questions before it`;
      const other = place.get(id);
      return own && other && other.order > own.order ? `the condition of ${q.id} reads ${id}, a later question; it may read only questions before it` : undefined;
    }, 0);
  });

  (form.logic ?? []).forEach((rule, i) => {
    const from = pageIndex.get(rule.page);
    if (from === undefined) {
      problems.push({ path: `logic.${i}.page`, message: `${rule.page} is not a page of this form` });
      return;
    }
    const to = pageIndex.get(rule.go_to);
    if (to === undefined && !endings.has(rule.go_to)) problems.push({ path: `logic.${i}.go_to`, message: `${rule.go_to} is neither a page nor an ending of this form` });
    else if (to !== undefined && to <= from) problems.push({ path: `logic.${i}.go_to`, message: `jumps from page ${rule.page} back to page ${rule.go_to}; a jump may only go to a later page or an ending` });
    checkCondition(rule.if, `logic.${i}.if`, (id) => {
      const other = place.get(id);
      return other && other.page > from ? `the rule of page ${rule.page} reads ${id}, a question on a later page; it may read only questions on its page or before` : undefined;
    }, 0);
  });
  return problems;
}
