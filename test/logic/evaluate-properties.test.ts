import { Script, createContext } from 'node:vm';
import t from 'tap';
import * as evaluator from '../../src/embeddables/evaluate.js';
import { bundleLogic } from '../../src/embed/script.js';
import { formAndAnswers } from '../support/logic-forms.js';
import fc from '../support/properties.js';

const { logicProblems, pagesOf, shownOn, next, walk, holds } = evaluator;

/** The evaluator as the embed carries it: the bundle /embed.js holds, run as a browser runs a classic script. */
function embedsCopy(): typeof evaluator {
  const context = createContext({});
  new Script(`${bundleLogic()}\nthis.logic = FeedbackLogic;`).runInContext(context);
  return (context as { logic: typeof evaluator }).logic;
}

t.test('given random sound forms and answers', async (t) => {
  const copy = embedsCopy();

  t.test('the form is sound by the evaluator’s own rules', async (t) => {
    fc.assert(fc.property(formAndAnswers, ({ form }) => logicProblems(form).length === 0));
    t.pass();
  });

  t.test('the walk starts on the first page, only goes forward and shows only questions of the pages it visits', async (t) => {
    fc.assert(
      fc.property(formAndAnswers, ({ form, answers }) => {
        const pages = pagesOf(form);
        const path = walk(form, answers);
        const at = path.pages.map((id) => pages.findIndex((p) => p.id === id));
        const onPath = new Set(path.pages.flatMap((id) => pages.find((p) => p.id === id)!.question_ids));
        return at[0] === 0 && at.every((index, i) => i === 0 || index > at[i - 1]!) && path.questions.every((id) => onPath.has(id));
      }),
    );
    t.pass();
  });

  t.test('a question of a visited page is shown exactly when its condition holds on the answers shown before it', async (t) => {
    fc.assert(
      fc.property(formAndAnswers, ({ form, answers }) => {
        const path = walk(form, answers);
        const known: Record<string, unknown> = {};
        for (const pageId of path.pages) {
          const shown = shownOn(form, pageId, answers);
          for (const id of pagesOf(form).find((p) => p.id === pageId)!.question_ids) {
            const question = form.questions.find((q) => q.id === id)!;
            const visible = question.show_if === undefined || holds(question.show_if, known);
            if (visible !== shown.includes(id)) return false;
            if (visible && id in answers) known[id] = answers[id];
          }
        }
        return true;
      }),
    );
    t.pass();
  });

  t.test('answers to questions off the path change neither the path nor the ending', async (t) => {
    fc.assert(
      fc.property(formAndAnswers, ({ form, answers }) => {
        const path = walk(form, answers);
        const onPathOnly = Object.fromEntries(Object.entries(answers).filter(([id]) => path.questions.includes(id)));
        return JSON.stringify(walk(form, onPathOnly)) === JSON.stringify(path);
      }),
    );
    t.pass();
  });

  t.test('next from each visited page is the next step of the walk', async (t) => {
    fc.assert(
      fc.property(formAndAnswers, ({ form, answers }) => {
        const path = walk(form, answers);
        return path.pages.every((pageId, i) => {
          const to = next(form, pageId, answers);
          return i + 1 < path.pages.length ? 'page' in to && to.page === path.pages[i + 1] : 'ending' in to && to.ending === path.ending;
        });
      }),
    );
    t.pass();
  });

  t.test('the embed’s copy, bundled from the same module, agrees on every function', async (t) => {
    fc.assert(
      fc.property(formAndAnswers, ({ form, answers }) => {
        const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
        const pageIds = pagesOf(form).map((p) => p.id);
        return (
          same(copy.walk(form, answers), walk(form, answers)) &&
          same(copy.logicProblems(form), logicProblems(form)) &&
          pageIds.every((id) => same(copy.shownOn(form, id, answers), shownOn(form, id, answers)) && same(copy.next(form, id, answers), next(form, id, answers)))
        );
      }),
    );
    t.pass();
  });
});
