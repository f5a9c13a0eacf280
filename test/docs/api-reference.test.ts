/**
 * docs/api.md as its reader needs it: it states every rule itself (no
 * pointer to a document outside the repository), and it names every
 * operation of the OpenAPI document and every error code the service has.
 */
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { STATUS } from '../../src/kernel/errors.js';
import { testApp } from '../support/app.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const reference = readFileSync(`${ROOT}docs/api.md`, 'utf8');

/** The lines that send the reader to a decision number, the decision list or the outside specification. */
function pointersOutside(text: string): string[] {
  return text.split('\n').flatMap((line, index) => (/\bD\d{1,2}\b/.test(line) || /decisions\.md|interface-spec|\bspec \d/i.test(line) ? [`line ${index + 1}: ${line.trim()}`] : []));
}

t.test('the reference refers to no decision number, decision list or outside specification', async (t) => {
  t.same(pointersOutside(reference), [], 'no D-number, decisions.md or spec section');
});

t.test('nor do the README and the other documents', async (t) => {
  const documents = ['README.md', ...readdirSync(`${ROOT}docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
  for (const document of documents) t.same(pointersOutside(readFileSync(`${ROOT}${document}`, 'utf8')), [], document);
});

t.test('no document holds a merge left unresolved', async (t) => {
  const documents = ['README.md', ...readdirSync(`${ROOT}docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
  for (const document of documents) {
    const markers = readFileSync(`${ROOT}${document}`, 'utf8').split('\n').flatMap((line, index) => (/^(<{7}|={7}|>{7})( |$)/.test(line) ? [`line ${index + 1}: ${line}`] : []));
    t.same(markers, [], document);
  }
});

t.test('the reference names every operation of the OpenAPI document', async (t) => {
  const { app } = await testApp(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  const missing = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .map((method) => `${method.toUpperCase()} ${path.replaceAll(/\{(\w+)\}/g, ':$1')}`)
      .filter((operation) => !reference.includes(operation)),
  );
  t.same(missing, [], 'each as "METHOD /path" with :id parameters');
  t.same(pointersOutside(JSON.stringify(document, null, 1)), [], 'and the document itself cites no decision number either');
});

t.test('the reference names every error code', async (t) => {
  const missing = Object.keys(STATUS).filter((code) => !reference.includes(`\`${code}\``));
  t.same(missing, []);
});
