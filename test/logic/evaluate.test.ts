import t from 'tap';
import { holds, logicProblems, next, pagesOf, shownOn, walk, type Condition, type LogicForm } from '../../src/embeddables/evaluate.js';

/** A three-page form with a jump and two endings, as the API reference shows it. */
const SURVEY: LogicForm = {
  questions: [
    { id: 'role', type: 'single_choice', required: true, choices: [{ id: 'dev' }, { id: 'design' }, { id: 'other' }] },
    { id: 'role_other', type: 'short_text', required: true, show_if: { question: 'role', op: 'equals', value: 'other' } },
    { id: 'languages', type: 'multiple_choice', required: true, choices: [{ id: 'ts' }, { id: 'go' }, { id: 'rust' }] },
    { id: 'tools', type: 'long_text' },
    { id: 'score', type: 'nps', required: true },
  ],
  pages: [
    { id: 'about', title: 'About you', question_ids: ['role', 'role_other'] },
    { id: 'dev', title: 'Your code', question_ids: ['languages', 'tools'] },
    { id: 'rating', title: 'Your rating', question_ids: ['score'] },
  ],
  logic: [
    { page: 'about', if: { question: 'role', op: 'not_equals', value: 'dev' }, go_to: 'rating' },
    { page: 'rating', if: { question: 'score', op: 'less_than', value: 7 }, go_to: 'sorry' },
  ],
  endings: [
    { id: 'sorry', title: 'Sorry to hear it', message: 'We will do better.' },
    { id: 'unused', title: 'Unused', message: 'Never reached.' },
  ],
};

t.test('holds: each operator on each shape of answer', async (t) => {
  const cases: Array<[string, Condition, Record<string, unknown>, boolean]> = [
    ['a choice equals its id', { question: 'q', op: 'equals', value: 'a' }, { q: 'a' }, true],
    ['a choice does not equal another id', { question: 'q', op: 'equals', value: 'b' }, { q: 'a' }, false],
    ['not_equals is equals negated', { question: 'q', op: 'not_equals', value: 'b' }, { q: 'a' }, true],
    ['an unanswered question equals nothing', { question: 'q', op: 'equals', value: 'a' }, {}, false],
    ['so it is not_equals anything', { question: 'q', op: 'not_equals', value: 'a' }, {}, true],
    ['a multiple choice equals the same set in any order', { question: 'q', op: 'equals', value: ['b', 'a'] }, { q: ['a', 'b'] }, true],
    ['but not a subset', { question: 'q', op: 'equals', value: ['a'] }, { q: ['a', 'b'] }, false],
    ['a lone selection equals its id', { question: 'q', op: 'equals', value: 'a' }, { q: ['a'] }, true],
    ['a multiple choice contains a selected id', { question: 'q', op: 'contains', value: 'b' }, { q: ['a', 'b'] }, true],
    ['and not an unselected one', { question: 'q', op: 'contains', value: 'c' }, { q: ['a', 'b'] }, false],
    ['a text contains a string whatever its case', { question: 'q', op: 'contains', value: 'SLOW' }, { q: 'Pages are slow' }, true],
    ['a text that lacks it', { question: 'q', op: 'contains', value: 'fast' }, { q: 'Pages are slow' }, false],
    ['a number is greater than a smaller one', { question: 'q', op: 'greater_than', value: 3 }, { q: 4 }, true],
    ['and not than itself', { question: 'q', op: 'greater_than', value: 4 }, { q: 4 }, false],
    ['an NPS of 0 is less than 7', { question: 'q', op: 'less_than', value: 7 }, { q: 0 }, true],
    ['a rating equals its number', { question: 'q', op: 'equals', value: 5 }, { q: 5 }, true],
    ['a day is after an earlier day', { question: 'q', op: 'greater_than', value: '2026-01-31' }, { q: '2026-02-01' }, true],
    ['and before a later one', { question: 'q', op: 'less_than', value: '2026-12-01' }, { q: '2026-02-01' }, true],
    ['a number and a day do not compare', { question: 'q', op: 'less_than', value: '2026-12-01' }, { q: 3 }, false],
    ['an unanswered question is neither greater nor less', { question: 'q', op: 'less_than', value: 7 }, {}, false],
    ['yes equals true', { question: 'q', op: 'equals', value: true }, { q: true }, true],
    ['no is answered', { question: 'q', op: 'answered' }, { q: false }, true],
    ['zero is answered', { question: 'q', op: 'answered' }, { q: 0 }, true],
    ['blank text is not answered', { question: 'q', op: 'not_answered' }, { q: ' \u200b ' }, true],
    ['an empty selection is not answered', { question: 'q', op: 'answered' }, { q: [] }, false],
    ['null is not answered', { question: 'q', op: 'answered' }, { q: null }, false],
    ['a matrix is answered by one row', { question: 'q', op: 'answered' }, { q: { speed: 'good' } }, true],
    ['all holds when every part does', { all: [{ question: 'q', op: 'answered' }, { question: 'r', op: 'equals', value: 1 }] }, { q: 'x', r: 1 }, true],
    ['all fails when one part does', { all: [{ question: 'q', op: 'answered' }, { question: 'r', op: 'equals', value: 1 }] }, { q: 'x', r: 2 }, false],
    ['any holds when one part does', { any: [{ question: 'q', op: 'answered' }, { question: 'r', op: 'equals', value: 1 }] }, { r: 1 }, true],
    ['an unknown operator never holds', { question: 'q', op: 'between' as 'equals', value: 1 }, { q: 1 }, false],
    ['a question named like a property of objects is unanswered', { question: 'constructor', op: 'answered' }, {}, false],
  ];
  for (const [name, condition, answers, expected] of cases) t.equal(holds(condition, answers), expected, name);
  // Shapes the API refuses still evaluate, to false, so the embed never breaks on one.
  t.equal(holds('answered' as unknown as Condition, { q: 1 }), false, 'not a condition');
  t.equal(holds({ question: 1, op: 'answered' } as unknown as Condition, { 1: 1 }), false, 'a question that is not an id');
  t.equal(holds({ question: 'q', op: 'answered' }, null as unknown as Record<string, unknown>), false, 'no answers at all');
});

t.test('pages: absent, the form is one page of every question, page_1', async (t) => {
  const form: LogicForm = { questions: [{ id: 'a', type: 'nps' }, { id: 'b', type: 'long_text' }] };
  t.same(pagesOf(form), [{ id: 'page_1', question_ids: ['a', 'b'] }]);
  t.same(walk(form, {}), { pages: ['page_1'], questions: ['a', 'b'], ending: null });
  t.same(logicProblems(form), []);
});

t.test('walk: given the survey, a developer sees every page and the default ending', async (t) => {
  t.same(walk(SURVEY, { role: 'dev', languages: ['ts'], score: 9 }), { pages: ['about', 'dev', 'rating'], questions: ['role', 'languages', 'tools', 'score'], ending: null });
});

t.test('walk: a designer jumps over the code page; a low score ends on its own ending', async (t) => {
  t.same(walk(SURVEY, { role: 'design', score: 3 }), { pages: ['about', 'rating'], questions: ['role', 'score'], ending: 'sorry' });
});

t.test('walk: show_if shows a question only when its condition holds', async (t) => {
  t.same(walk(SURVEY, { role: 'other', role_other: 'PM', score: 8 }).questions, ['role', 'role_other', 'score']);
  t.same(shownOn(SURVEY, 'about', { role: 'design' }), ['role']);
  t.same(shownOn(SURVEY, 'about', { role: 'other' }), ['role', 'role_other']);
});

t.test('walk: answers left on a page the path skips change nothing', async (t) => {
  // A visitor who said "dev", answered the code page, went back and chose "design".
  const stale = { role: 'design', languages: ['go'], tools: 'vim', score: 9 };
  t.same(walk(SURVEY, stale), walk(SURVEY, { role: 'design', score: 9 }));
  // Nor does the answer to a hidden question: role_other's text is not read once role is no longer "other".
  const form: LogicForm = {
    questions: [
      { id: 'a', type: 'yes_no' },
      { id: 'b', type: 'short_text', show_if: { question: 'a', op: 'equals', value: true } },
      { id: 'c', type: 'short_text', show_if: { question: 'b', op: 'answered' } },
    ],
  };
  t.same(walk(form, { a: false, b: 'left behind' }).questions, ['a']);
  t.same(walk(form, { a: true, b: 'typed' }).questions, ['a', 'b', 'c']);
});

t.test('next: where leaving a page goes', async (t) => {
  t.same(next(SURVEY, 'about', { role: 'dev' }), { page: 'dev' });
  t.same(next(SURVEY, 'about', { role: 'design' }), { page: 'rating' });
  t.same(next(SURVEY, 'rating', { role: 'dev', score: 10 }), { ending: null });
  t.same(next(SURVEY, 'rating', { role: 'dev', score: 2 }), { ending: 'sorry' });
  t.same(next(SURVEY, 'nowhere', {}), { ending: null }, 'an unknown page ends on the default ending');
  // A page off the path (the preview may show any): its own rules, read with the answers as they are.
  t.same(next(SURVEY, 'dev', { role: 'design' }), { page: 'rating' });
  t.same(shownOn(SURVEY, 'dev', { role: 'design' }), ['languages', 'tools']);
  t.same(shownOn(SURVEY, 'nowhere', {}), []);
});

t.test('the first rule of a page that holds wins', async (t) => {
  const form: LogicForm = {
    questions: [{ id: 'n', type: 'number' }, { id: 'x', type: 'nps' }, { id: 'y', type: 'nps' }],
    pages: [{ id: 'p1', question_ids: ['n'] }, { id: 'p2', question_ids: ['x'] }, { id: 'p3', question_ids: ['y'] }],
    logic: [
      { page: 'p1', if: { question: 'n', op: 'greater_than', value: 10 }, go_to: 'big' },
      { page: 'p1', if: { question: 'n', op: 'greater_than', value: 0 }, go_to: 'p3' },
    ],
    endings: [{ id: 'big', title: 'Big', message: 'A big number.' }],
  };
  t.same(walk(form, { n: 11 }), { pages: ['p1'], questions: ['n'], ending: 'big' });
  t.same(walk(form, { n: 1 }), { pages: ['p1', 'p3'], questions: ['n', 'y'], ending: null });
  t.same(walk(form, {}), { pages: ['p1', 'p2', 'p3'], questions: ['n', 'x', 'y'], ending: null });
});

t.test('a stored backward jump or one to nothing is passed over, so the walk always ends', async (t) => {
  const form: LogicForm = {
    questions: [{ id: 'a', type: 'nps' }, { id: 'b', type: 'nps' }],
    pages: [{ id: 'p1', question_ids: ['a'] }, { id: 'p2', question_ids: ['b'] }],
    logic: [
      { page: 'p2', if: { question: 'a', op: 'answered' }, go_to: 'p1' },
      { page: 'p2', if: { question: 'a', op: 'answered' }, go_to: 'nowhere' },
    ],
  };
  t.same(walk(form, { a: 1 }), { pages: ['p1', 'p2'], questions: ['a', 'b'], ending: null });
  t.equal(logicProblems(form).length, 2);
});

t.test('logicProblems: a sound definition has none', async (t) => {
  t.same(logicProblems(SURVEY), []);
});

t.test('logicProblems: each rule broken names its field', async (t) => {
  const problems = (form: Partial<LogicForm>) => logicProblems({ ...SURVEY, ...form });
  const question = (id: string, rest: object = {}) => ({ id, type: 'nps', ...rest });
  t.match(problems({ pages: [{ id: 'p', question_ids: ['role', 'role_other', 'languages', 'tools'] }] }), [{ path: 'questions.4.id', message: /score is on no page/ }]);
  t.match(problems({ pages: [...SURVEY.pages!, { id: 'again', question_ids: ['score'] }] }), [{ path: 'pages.3.question_ids.0', message: /on two pages/ }]);
  t.match(problems({ pages: [...SURVEY.pages!, { id: 'x', question_ids: ['ghost'] }] }), [{ path: 'pages.3.question_ids.0', message: /ghost is not a question/ }]);
  t.match(problems({ pages: [...SURVEY.pages!, { id: 'empty', question_ids: [] }] }), [{ path: 'pages.3.question_ids', message: /holds no question/ }]);
  t.match(problems({ pages: [...SURVEY.pages!, { id: 'about', question_ids: [] }] }), [{ path: 'pages.3.id', message: /used by two pages/ }]);
  t.match(problems({ logic: [{ page: 'rating', if: { question: 'score', op: 'answered' }, go_to: 'about' }] }), [{ path: 'logic.0.go_to', message: /back to page about/ }]);
  t.match(problems({ logic: [{ page: 'rating', if: { question: 'score', op: 'answered' }, go_to: 'rating' }] }), [{ path: 'logic.0.go_to', message: /back to page rating/ }]);
  t.match(problems({ logic: [{ page: 'about', if: { question: 'role', op: 'answered' }, go_to: 'mars' }] }), [{ path: 'logic.0.go_to', message: /mars is neither a page nor an ending/ }]);
  t.match(problems({ logic: [{ page: 'mars', if: { question: 'role', op: 'answered' }, go_to: 'rating' }] }), [{ path: 'logic.0.page', message: /mars is not a page/ }]);
  t.match(problems({ logic: [{ page: 'about', if: { question: 'score', op: 'answered' }, go_to: 'rating' }] }), [{ path: 'logic.0.if.question', message: /score, a question on a later page/ }]);
  t.match(problems({ logic: [{ page: 'about', if: { all: [{ question: 'role', op: 'answered' }, { question: 'ghost', op: 'answered' }] }, go_to: 'rating' }] }), [
    { path: 'logic.0.if.all.1.question', message: /ghost is not a question/ },
  ]);
  t.match(problems({ logic: [{ page: 'about', if: { any: [] }, go_to: 'rating' }] }), [{ path: 'logic.0.if.any', message: /at least one/ }]);
  t.match(problems({ endings: [{ id: 'dev', title: 'x', message: 'y' }] }), [{ path: 'endings.0.id', message: /names a page and an ending/ }]);
  t.match(problems({ endings: [{ id: 'sorry', title: 'x', message: 'y' }, { id: 'sorry', title: 'x', message: 'y' }] }), [{ path: 'endings.1.id', message: /two endings/ }]);
  t.match(logicProblems({ questions: [question('a', { show_if: { question: 'b', op: 'answered' } }), question('b')] }), [{ path: 'questions.0.show_if.question', message: /reads b, a later question/ }]);
  t.match(logicProblems({ questions: [question('a', { show_if: { question: 'a', op: 'answered' } })] }), [{ path: 'questions.0.show_if.question', message: /itself/ }]);
  t.match(logicProblems({ questions: [question('a'), question('b', { show_if: { question: 'a', op: 'between', value: 1 } })] }), [{ path: 'questions.1.show_if.op' }]);
  let deep: Condition = { question: 'a', op: 'answered' };
  for (let i = 0; i < 12; i++) deep = { all: [deep] };
  t.match(logicProblems({ questions: [question('a'), question('b', { show_if: deep })] }), [{ message: /at most 10 deep/ }]);
  t.match(logicProblems({ questions: [question('a'), question('b', { show_if: 'yes' })] }), [{ path: 'questions.1.show_if', message: /must be a condition/ }]);
});

t.test('logicProblems: an operator and value must fit the question read', async (t) => {
  const form = (type: string, op: string, value?: unknown, extra: object = {}) =>
    logicProblems({ questions: [{ id: 'a', type, ...extra }, { id: 'b', type: 'nps', show_if: { question: 'a', op, value } as Condition }] });
  const choices = { choices: [{ id: 'x' }, { id: 'y' }] };
  const fits: Array<[string, string, unknown, object?]> = [
    ['nps', 'less_than', 7],
    ['number', 'equals', 2.5],
    ['date', 'greater_than', '2026-01-01'],
    ['date', 'equals', '2026-01-01'],
    ['date', 'less_than', '2028-02-29'],
    ['yes_no', 'equals', false],
    ['consent', 'not_equals', true],
    ['single_choice', 'equals', 'x', choices],
    ['multiple_choice', 'contains', 'y', choices],
    ['multiple_choice', 'equals', ['x', 'y'], choices],
    ['short_text', 'contains', 'slow'],
    ['email', 'equals', 'a@example.com'],
    ['matrix', 'answered', undefined],
    ['severity', 'equals', 'high'],
  ];
  for (const [type, op, value, extra] of fits) t.same(form(type, op, value, extra), [], `${op} ${JSON.stringify(value)} fits a ${type} question`);
  const misfits: Array<[string, string, unknown, RegExp, object?]> = [
    ['nps', 'less_than', '7', /needs a number/],
    ['nps', 'equals', undefined, /needs a value/],
    ['date', 'greater_than', '1 May', /YYYY-MM-DD/],
    ['date', 'equals', 3, /YYYY-MM-DD/],
    ['date', 'greater_than', '2026-02-30', /real calendar day/],
    ['date', 'not_equals', '2026-13-01', /real calendar day/],
    ['short_text', 'greater_than', 'b', /applies to numbers/],
    ['nps', 'contains', 1, /contains applies to/],
    ['short_text', 'contains', '', /needs a text/],
    ['multiple_choice', 'contains', 1, /needs a choice id/, choices],
    ['multiple_choice', 'contains', 'z', /not a choice of a/, choices],
    ['multiple_choice', 'equals', [1], /choice id or a list/, choices],
    ['single_choice', 'equals', 'z', /not a choice of a/, choices],
    ['yes_no', 'equals', 'yes', /true or false/],
    ['matrix', 'equals', {}, /does not apply to a matrix/],
    ['short_text', 'equals', 3, /needs a text/],
    ['statement', 'answered', undefined, /statement takes no answer/],
    ['statement', 'equals', 'x', /statement takes no answer/],
  ];
  for (const [type, op, value, message, extra] of misfits) t.match(form(type, op, value, extra), [{ path: 'questions.1.show_if.value', message }], `${op} ${JSON.stringify(value)} does not fit a ${type} question`);
});
