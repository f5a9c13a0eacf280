import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { floorOf, measure, report, roomOf, submissionPath } from '../scripts/structure.js';

/**
 * The structure in numbers (docs/architecture.md), measured from the imports
 * as `node scripts/structure.js` prints them: it holds to the goals, and the
 * path of a submission grows no longer than it is.
 */
const numbers = measure();

t.test('no import cycle between files', async (t) => {
  t.same(numbers.cycles, []);
});

t.test('at most five files loose in src/', async (t) => {
  t.ok(numbers.loose.length <= 5, numbers.loose.join(', '));
});

t.test('at most eight import arrows run back up a floor', async (t) => {
  t.ok(numbers.arrows.length <= 8, numbers.arrows.map(({ arrow }) => arrow).join('\n'));
});

t.test('the path of a submission crosses at most 12 files in 4 folders', async (t) => {
  const { files, folders } = numbers.submissionPath;
  t.ok(files.length <= 12, files.join('\n'));
  t.ok(folders.length <= 4, folders.join(', '));
  for (const step of ['src/submissions/routes.ts', 'src/submissions/submit.ts', 'src/submissions/decide.ts', 'src/submissions/visitors.ts', 'src/embeddables/evaluate.ts', 'projections/responses.ts']) {
    t.ok(files.includes(step), `${step} is on the path`);
  }
  t.notOk(files.some((file) => /^src\/(http|infra|kernel)\//.test(file)), 'the plumbing is left out');
});

t.test('the report prints each number', async (t) => {
  const printed = report(numbers);
  t.match(printed, `Import arrows that run back up a floor: ${numbers.arrows.length}`);
  t.match(printed, `The path of a submission: ${numbers.submissionPath.files.length} files in ${numbers.submissionPath.folders.length} folders`);
});

t.test('floors and rooms as the map names them', async (t) => {
  t.ok(floorOf('src/app.ts') < floorOf('src/forms/routes.ts'));
  t.ok(floorOf('src/forms/routes.ts') < floorOf('projections/forms.ts'));
  t.ok(floorOf('projections/forms.ts') < floorOf('src/kernel/aggregate.ts'));
  t.ok(floorOf('src/kernel/feed/runner.ts') < floorOf('src/infra/ids.ts'));
  t.equal(roomOf('src/kernel/feed/runner.ts'), 'src/kernel/feed/');
  t.equal(roomOf('src/forms/routes.ts'), 'src/forms/');
  t.equal(roomOf('src/app.ts'), 'src/app.ts');
  t.throws(() => floorOf('bench/run.ts'));
});

/** A small source tree in a temporary folder, to show each measure sees what it is for. */
const tree = (t: Test, files: Record<string, string>): string => {
  const root = mkdtempSync(join(tmpdir(), 'structure-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
};

t.test('an arrow back up and a cycle are found and named', async (t) => {
  const root = tree(t, {
    'src/kernel/clock.ts': "import { formOf } from '../forms/form.js';\nexport const now = () => formOf;\n",
    'src/forms/form.ts': "import { now } from '../kernel/clock.js';\nexport const formOf = () => now;\n",
    'src/config.ts': "export type { Form } from './forms/types.js';\n",
    'src/forms/types.ts': 'export interface Form { id: string }\n',
  });
  const found = measure(root);
  t.same(found.loose, ['src/config.ts']);
  t.same(
    found.arrows.map(({ arrow }) => arrow),
    ['src/config.ts -> src/forms/', 'src/kernel/ -> src/forms/'],
  );
  t.same(found.arrows[1]!.imports, ['src/kernel/clock.ts -> src/forms/form.ts']);
  t.same(found.cycles, [['src/forms/form.ts', 'src/kernel/clock.ts']]);
});

t.test('the path follows the names the route uses, not types, not the plumbing', async (t) => {
  const root = tree(t, {
    'src/feature/routes.ts': [
      "import { decide } from './decide.js';",
      "import * as limits from '../limits/all.js';",
      "import check from '../check/index.js';",
      "import type { Shape } from '../shapes/shape.js';",
      "import { unused } from './unused.js';",
      "import { log } from '../http/log.js';",
      "import { again } from './again.js';",
      'const local = (shape: Shape) => decide(shape);',
      'export function route() { log(); limits.apply(); check(); return { decide: local, again }; }',
      'export const other = () => unused;',
    ].join('\n'),
    'src/feature/decide.ts': "import type { Shape } from '../shapes/shape.js';\nexport { rule } from '../rules/rule.js';\nexport const decide = (shape: Shape) => shape;\n",
    'src/feature/again.ts': "export { rule as again } from '../rules/rule.js';\n",
    'src/rules/rule.ts': 'export enum Rule { One }\nexport class rule {}\n',
    'src/limits/all.ts': 'export const apply = () => 1;\n',
    'src/check/index.ts': 'export default function check() {}\n',
    'src/shapes/shape.ts': 'export interface Shape { id: string }\n',
    'src/feature/unused.ts': 'export const unused = 1;\n',
    'src/http/log.ts': 'export const log = () => 1;\n',
  });
  const path = submissionPath(root, { file: 'src/feature/routes.ts', name: 'route' });
  t.same(path.files, ['projections/responses.ts', 'src/check/index.ts', 'src/feature/again.ts', 'src/feature/decide.ts', 'src/feature/routes.ts', 'src/limits/all.ts', 'src/rules/rule.ts']);
  t.same(path.folders, ['projections/', 'src/check/', 'src/feature/', 'src/limits/', 'src/rules/']);
});
