import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { adminProcess, type Programs } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const ROOT = new URL('../../', import.meta.url).pathname;

t.test('npm run admin runs the compiled CLI, compiled again only after a source changed', async (t) => {
  // A checkout of its own, so that this test's compiles and edits touch no dist/ or source anyone runs.
  const checkout = tempDir(t, 'checkout');
  for (const path of ['src', 'projections', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json']) cpSync(join(ROOT, path), join(checkout, path), { recursive: true });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(checkout, 'node_modules'), 'dir');
  mkdirSync(join(checkout, 'data'));
  const programs: Programs = { server: '', admin: join(checkout, 'scripts/admin.js'), tsx: false, cwd: checkout };
  const help = () => adminProcess(['--help'], { DATA_DIR: join(checkout, 'data') }, programs);
  const compiling = /^admin: compiling the sources into dist\/ \(once after each change\)\n$/;

  t.match(await help(), { code: 0, stderr: compiling, stdout: /^Usage: admin <command>/ }, 'the first run compiles');
  t.match(await help(), { code: 0, stderr: '', stdout: /^Usage: admin <command>/ }, 'the next one runs what was compiled');
  const commands = join(checkout, 'src/cli/commands.ts');
  writeFileSync(commands, readFileSync(commands, 'utf8').replace("description: 'the head of the history,", "description: 'CHANGED the head of the history,"));
  t.match(await help(), { code: 0, stderr: compiling, stdout: /status +CHANGED the head of the history/ }, 'a changed source is compiled again, and runs');
  t.match(await help(), { code: 0, stderr: '', stdout: /status +CHANGED the head of the history/ });
});
