/**
 * Random forms with pages, conditions, jumps and endings, sound by
 * construction (every condition reads an earlier question, every jump goes
 * forward), with answers of every shape to walk them with. The questions are
 * as the API takes them, so the same draws serve the evaluator and the server.
 */
import type { Condition, LogicForm } from '../../src/embeddables/evaluate.js';
import fc from './properties.js';

const CHOICES = [
  { id: 'a', label: 'A' },
  { id: 'b', label: 'B' },
  { id: 'c', label: 'C' },
];
const DAYS = ['2026-01-01', '2026-06-15', '2026-12-31'];
const TYPES = ['single_choice', 'multiple_choice', 'number', 'short_text', 'yes_no', 'date', 'nps'] as const;
type Type = (typeof TYPES)[number];

export interface DrawnQuestion {
  id: string;
  type: Type;
  title: string;
  required: boolean;
  choices?: typeof CHOICES;
  show_if?: Condition;
}
export interface DrawnForm extends LogicForm {
  questions: DrawnQuestion[];
}

type Gen = <T>(arb: fc.Arbitrary<T>) => T;
/** fast-check's `gen` draws from a builder of an arbitrary; this draws from the arbitrary. */
const drawing = (g: fc.GeneratorValue): Gen => (arb) => g(() => arb);

/** A value a visitor may give a question of this type. */
function answerOf(g: Gen, type: Type): unknown {
  switch (type) {
    case 'single_choice':
      return g(fc.constantFrom('a', 'b', 'c'));
    case 'multiple_choice':
      return g(fc.subarray(['a', 'b', 'c'], { minLength: 1 }));
    case 'number':
    case 'nps':
      return g(fc.integer({ min: 0, max: 10 }));
    case 'short_text':
      return g(fc.constantFrom('x', 'y', 'xy', 'Yes'));
    case 'yes_no':
      return g(fc.boolean());
    case 'date':
      return g(fc.constantFrom(...DAYS));
  }
}

/** A condition on one question that fits its type. */
function conditionOn(g: Gen, question: DrawnQuestion): Condition {
  const id = question.id;
  if (g(fc.integer({ min: 0, max: 5 })) === 0) return { question: id, op: g(fc.constantFrom('answered' as const, 'not_answered' as const)) };
  switch (question.type) {
    case 'single_choice':
      return { question: id, op: g(fc.constantFrom('equals' as const, 'not_equals' as const)), value: g(fc.constantFrom('a', 'b', 'c')) };
    case 'multiple_choice':
      return g(fc.boolean()) ? { question: id, op: 'contains', value: g(fc.constantFrom('a', 'b', 'c')) } : { question: id, op: 'equals', value: g(fc.subarray(['a', 'b', 'c'], { minLength: 1 })) };
    case 'number':
    case 'nps':
      return { question: id, op: g(fc.constantFrom('equals' as const, 'greater_than' as const, 'less_than' as const)), value: g(fc.integer({ min: 0, max: 10 })) };
    case 'short_text':
      return { question: id, op: g(fc.constantFrom('contains' as const, 'equals' as const)), value: g(fc.constantFrom('x', 'y')) };
    case 'yes_no':
      return { question: id, op: g(fc.constantFrom('equals' as const, 'not_equals' as const)), value: g(fc.boolean()) };
    case 'date':
      return { question: id, op: g(fc.constantFrom('greater_than' as const, 'less_than' as const, 'equals' as const)), value: g(fc.constantFrom(...DAYS)) };
  }
}

/** A condition on some of `earlier` (none: no condition), sometimes `all` or `any` of two. */
function conditionAmong(g: Gen, earlier: DrawnQuestion[]): Condition | undefined {
  if (earlier.length === 0) return undefined;
  const one = () => conditionOn(g, g(fc.constantFrom(...earlier)));
  const shape = g(fc.integer({ min: 0, max: 4 }));
  return shape === 0 ? { all: [one(), one()] } : shape === 1 ? { any: [one(), one()] } : one();
}

/** A sound form: 1-8 questions on 1-4 pages, some with `show_if`, rules that jump forward, 0-2 endings. */
export const logicForm: fc.Arbitrary<DrawnForm> = fc.gen().map((drawn) => {
  const g = drawing(drawn);
  const count = g(fc.integer({ min: 1, max: 8 }));
  const questions: DrawnQuestion[] = [];
  for (let i = 0; i < count; i++) {
    const type = g(fc.constantFrom(...TYPES));
    const question: DrawnQuestion = { id: `q${i}`, type, title: `Question ${i}`, required: g(fc.boolean()) };
    if (type === 'single_choice' || type === 'multiple_choice') question.choices = CHOICES;
    if (g(fc.integer({ min: 0, max: 2 })) === 0) {
      const condition = conditionAmong(g, questions);
      if (condition) question.show_if = condition;
    }
    questions.push(question);
  }
  // Cut the questions into pages, in order.
  const pageCount = g(fc.integer({ min: 1, max: Math.min(4, count) }));
  const cuts = count > 1 ? [...new Set(g(fc.array(fc.integer({ min: 1, max: count - 1 }), { maxLength: pageCount - 1 })))].sort((a, b) => a - b) : [];
  const bounds = [0, ...cuts, count];
  const pages = bounds.slice(1).map((end, p) => ({ id: `p${p}`, title: `Page ${p}`, question_ids: questions.slice(bounds[p], end).map((q) => q.id) }));
  const endings = Array.from({ length: g(fc.integer({ min: 0, max: 2 })) }, (_, e) => ({ id: `end${e}`, title: `Ending ${e}`, message: `Thanks, ${e}.` }));
  const logic: LogicForm['logic'] = [];
  pages.forEach((page, p) => {
    const readable = questions.filter((q) => pages.findIndex((other) => other.question_ids.includes(q.id)) <= p);
    const targets = [...pages.slice(p + 1).map((later) => later.id), ...endings.map((e) => e.id)];
    const rules = g(fc.integer({ min: 0, max: 2 }));
    for (let r = 0; r < rules && targets.length > 0; r++) {
      const condition = conditionAmong(g, readable);
      if (condition) logic.push({ page: page.id, if: condition, go_to: g(fc.constantFrom(...targets)) });
    }
  });
  const form: DrawnForm = { questions, pages, logic, endings };
  return form;
});

/** Answers to some of the form's questions (off the path too), each of its question's type. */
export const answersTo = (form: DrawnForm): fc.Arbitrary<Record<string, unknown>> =>
  fc.gen().map((drawn) => {
    const g = drawing(drawn);
    const answers: Record<string, unknown> = {};
    for (const question of form.questions) if (g(fc.integer({ min: 0, max: 3 })) > 0) answers[question.id] = answerOf(g, question.type);
    return answers;
  });

/** A form and answers to it. */
export const formAndAnswers = logicForm.chain((form) => answersTo(form).map((answers) => ({ form, answers })));
