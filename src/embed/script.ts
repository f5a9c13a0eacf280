import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { LANGUAGES, packText } from './languages.js';

/**
 * The script visitors' browsers run: the hand-written embed (embed.js),
 * given the form evaluator (src/embeddables/evaluate.ts) under the local name
 * `FeedbackLogic` (`holds`, `pagesOf`, `shownOn`, `next`, `walk`,
 * `logicProblems`), so the embed, the dashboard's preview (which runs the
 * embed) and the server that checks submissions run one module. Both sit in
 * one function, so the page's globals gain nothing.
 *
 * `npm run build` writes it beside this file as `served.js`; without it
 * (running from the sources) it is bundled once, at the first request for it.
 */
export const SERVED_FILE = 'served.js';
export const LOGIC_NAME = 'FeedbackLogic';

/** esbuild, loaded when the script is made (once a process, or never where `served.js` is built). */
const esbuild = () => createRequire(import.meta.url)('esbuild') as typeof import('esbuild');

/** The evaluator as a classic script that declares `var FeedbackLogic`. From the TypeScript sources, or from the compiled module in a build. */
export function bundleLogic(): string {
  const source = new URL('../embeddables/evaluate.ts', import.meta.url);
  const entry = existsSync(source) ? source : new URL('../embeddables/evaluate.js', import.meta.url);
  const result = esbuild().buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: LOGIC_NAME,
    // Browsers the embed supports read ES2018 (the evaluator's `\p{…}` needs it).
    target: 'es2018',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/**
 * The embed and the evaluator in one function, minified: visitors download
 * it on every page it is pasted on, and the readable source stays in
 * embed.js (the dashboard and hosted pages serve the same bytes).
 */
export function composeScript(embed: string, logic: string): string {
  return esbuild().transformSync(`(function () {\n${logic}${strings()}${embed}})();\n`, { minify: true, target: 'es2018', legalComments: 'none', logLevel: 'silent' }).code;
}

/**
 * The interface in English, built in (`EMBED_EN`), and the codes of the
 * languages with a pack the embed fetches when a visitor needs one
 * (`EMBED_LANGUAGES`): local names, as the evaluator's.
 */
export function strings(): string {
  return `var EMBED_EN = ${packText('en')!};\nvar EMBED_LANGUAGES = ${JSON.stringify(LANGUAGES.map((l) => l.code))};\nvar EMBED_RTL = ${JSON.stringify(LANGUAGES.filter((l) => l.dir === 'rtl').map((l) => l.code))};\n`;
}

let served: string | undefined;

/** The script `/embed.js` serves, made once per process. */
export function embedScript(): string {
  if (served === undefined) {
    const built = new URL(`./${SERVED_FILE}`, import.meta.url);
    served = existsSync(built) ? readFileSync(built, 'utf8') : composeScript(readFileSync(new URL('./embed.js', import.meta.url), 'utf8'), bundleLogic());
  }
  return served;
}
