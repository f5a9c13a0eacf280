/**
 * The README's Quick start, run as a newcomer runs it: every `sh` block of
 * that section, in order, in one bash session (so the shell variables it sets
 * carry over), against a fresh server. `npm install` is what gave this
 * checkout its node_modules; `npm start` is the server the test starts, on a
 * free port and a new DATA_DIR, which the README's address is changed to.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { childEnv, startServer } from './support/processes.js';
import { tempDir } from './support/services.js';

const ROOT = new URL('../', import.meta.url).pathname;
const README_ADDRESS = 'http://127.0.0.1:3000';

/** The `sh` blocks of the section under `## Quick start`, up to the next `## ` heading. */
export function quickStartBlocks(readme: string): string[] {
  const section = /^## Quick start\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!.trimEnd());
}

const MARK = '::quick-start block done ';

t.test('the Quick start runs top to bottom against a fresh server', async (t) => {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const blocks = quickStartBlocks(readme);
  t.ok(blocks.length >= 8, `${blocks.length} blocks`);
  t.equal(blocks[0], 'npm install\nnpm start', 'it starts with the two commands of a fresh clone');
  t.notMatch(blocks.join('\n'), /\bjq\b/, 'and needs nothing beyond Node.js and curl');
  t.ok(blocks.slice(1).every((block) => !/\bnpm (install|start)\b/.test(block)), 'the server is started once, at the top');

  const dir = tempDir(t);
  const server = await startServer({ DATA_DIR: dir });
  t.teardown(() => server.stop());

  const steps = blocks.slice(1).map((block) => block.replaceAll(README_ADDRESS, server.url));
  const script = [
    'set -euo pipefail',
    // A reply of 400 or more fails its block, as a newcomer would see it fail.
    'curl() { command curl --fail-with-body "$@"; }',
    ...steps.flatMap((step, i) => [step, `echo; echo '${MARK}${i + 1}'`]),
  ].join('\n');
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    // The admin commands find the server's stores through DATA_DIR, as the README says they must.
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env: childEnv({ DATA_DIR: dir, HOME: process.env.HOME ?? dir }, false), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const outputs = run.stdout.split(new RegExp(`\\n${MARK}\\d+\\n`));
  for (const [i, step] of steps.entries()) {
    const failed = !run.stdout.includes(`${MARK}${i + 1}\n`);
    t.notOk(failed, `block ${i + 1} succeeds: ${step.split('\n')[0]}`, failed ? { block: step, stderr: run.stderr } : {});
  }
  t.equal(run.code, 0, run.stderr);

  const replies = outputs.flatMap((output) => output.split('\n')).filter((line) => line.startsWith('{'));
  const published = replies.map((line) => JSON.parse(line)).filter((reply) => reply.published === true);
  t.equal(published.length, 4, 'the widget, the two forms and the poll are published');
  t.match(outputs.join('\n'), /<script src="http:\/\/127\.0\.0\.1:\d+\/embed\.js" data-widget="wgt_\w+" async><\/script>/, 'the embed tag is printed with the widget id');
  const responses = replies.map((line) => JSON.parse(line)).find((reply) => Array.isArray(reply.responses));
  t.match(responses?.responses, [{ answers: { email: 'ada@example.com', consent: true }, consent_record: { consent_given: true, consent_text: /^I agree that Acme/ } }], 'the submitted response is read back with its consent record');
  t.match(replies.map((line) => JSON.parse(line)).find((reply) => reply.poll_id), { total_votes: 0, options: [{ text: 'Free' }, { text: 'Pro' }, { text: 'Business' }] }, 'and the poll results are public');
});
