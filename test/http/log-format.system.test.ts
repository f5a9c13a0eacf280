import { spawn } from 'node:child_process';
import t from 'tap';
import { logFormat } from '../../src/services.js';
import { childEnv, freePort, startServer } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

t.test('given a terminal the lines are for a person, otherwise JSON', async (t) => {
  t.equal(logFormat({ isTTY: true }), 'pretty');
  t.equal(logFormat({ isTTY: false }), 'json');
  t.equal(logFormat({}), 'json', 'a pipe or a file has no isTTY');
});

t.test('the server logs JSON lines into a pipe', async (t) => {
  const server = await startServer({ DATA_DIR: tempDir(t), LOG_LEVEL: 'info' });
  await fetch(`${server.url}/nowhere`);
  await server.stop();
  const lines = server.log().trim().split('\n');
  const parsed = lines.map((line) => JSON.parse(line) as { msg: string; code?: string });
  t.ok(parsed.some((line) => line.msg.startsWith('feedback service ready')), 'every line is JSON');
  t.ok(parsed.some((line) => line.msg === 'request completed' && line.code === 'not_found'), 'with the error code on the 404');
});

t.test('the server logs readable lines on a terminal', async (t) => {
  const port = await freePort();
  // `script` gives the server a pseudo-terminal for its stdout, as a person's shell would.
  const child = spawn('script', ['-qec', `${process.execPath} ${MAIN}`, '/dev/null'], {
    env: childEnv({ DATA_DIR: tempDir(t), LOG_LEVEL: 'info', PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 60_000);
    child.stdout.on('data', () => {
      if (output.includes('feedback service ready')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.on('exit', () => resolve(false));
  });
  // The whole group: `script` and the server under it.
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
  t.ok(ready, `the server started: ${output.slice(0, 500)}`);
  t.match(output, /INFO.*feedback service ready/, 'a level and the message, on one line');
  t.notMatch(output, /\{"level":/, 'no JSON');
});
