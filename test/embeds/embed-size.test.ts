import { readFileSync } from 'node:fs';
import { Script, createContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { testApp } from '../support/app.js';

/** Visitors download the embed on every page it is pasted on: it stays small. */
const BUDGET = 20 * 1024;

t.test('/embed.js is the embed with the form evaluator, minified, a classic script under 20 kB gzipped', async (t) => {
  const { app } = await testApp(t);
  const reply = await app.inject({ method: 'GET', url: '/embed.js' });
  t.equal(reply.statusCode, 200);
  const script = reply.body;
  const written = readFileSync(new URL('../../src/embed/embed.js', import.meta.url), 'utf8');
  t.ok(script.length < written.length, 'smaller than the embed as written');
  t.ok(script.includes('"/progress"') || script.includes('/progress'), 'carrying the embed (its progress route)');
  t.match(script, /logicProblems/, 'and the evaluator');
  t.doesNotThrow(() => new Script(script, { filename: 'embed.js' }), 'it parses as a classic script');
  const size = gzipSync(script, { level: 9 }).length;
  t.ok(size < BUDGET, `${size} bytes gzipped (${script.length} raw), budget ${BUDGET}`);
  // Run in a page without the script tag, it defines nothing global.
  const page: Record<string, unknown> = { document: { currentScript: null } };
  const context = createContext(page);
  new Script(script).runInContext(context);
  t.equal(new Script('typeof FeedbackLogic').runInContext(context), 'undefined', 'the evaluator stays local to the script');
});
