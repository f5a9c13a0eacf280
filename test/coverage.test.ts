/**
 * The coverage thresholds in .taprc hold only if the report reads the
 * TypeScript the tests run. It maps the compiled code back through each
 * file's source map, and a map whose text is given as null reads as an
 * empty file: every such file then counts as one covered line, whatever
 * the tests reached.
 */
import { findSourceMap } from 'node:module';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import '../src/embeddables/evaluate.js';

t.test('a TypeScript file the tests load has a source map the coverage report can read', async (t) => {
  const url = pathToFileURL(new URL('../src/embeddables/evaluate.ts', import.meta.url).pathname).href;
  const map = findSourceMap(url);
  t.ok(map, 'compiled with a source map');
  const content = map?.payload.sourcesContent;
  t.ok(content === undefined || content.every((text) => typeof text === 'string' && text.length > 0), 'its text is given or left to be read from the file, never given as empty');
});
