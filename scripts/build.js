// `npm run build [-- OUT_DIR] [--no-check]`: compiles src/ and projections/
// into OUT_DIR (dist/ by default), type-checking them unless `--no-check`
// (the test suite, which type-checks beside its tests, builds that way), then copies the embed script beside its route and
// writes the script served (the embed with the form evaluator bundled in)
// beside it (and the dashboard's files beside theirs),
// and the API reference where the server serves it from (OUT_DIR/docs/).
// It also publishes the API for clients: the OpenAPI document a server with
// default settings serves (OUT_DIR/client/openapi.json) and TypeScript types
// of every path, made from it by openapi-typescript (OUT_DIR/client/api.d.ts),
// which openapi-fetch turns into a typed client.
// Browsers load that script as a classic script, so it is not compiled as a
// module (it would end in `export {};`, which a classic script refuses).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const check = !args.includes('--no-check');
const outDir = resolve(args.find((arg) => !arg.startsWith('--')) ?? join(root, 'dist'));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir, ...(check ? [] : ['--noCheck'])], { stdio: 'inherit' });
} catch {
  // tsc has printed the errors.
  process.exit(1);
}
copyFileSync(join(root, 'src/embed/embed.js'), join(outDir, 'src/embed/embed.js'));
// The language packs the embed fetches (English is also built into the script).
cpSync(join(root, 'src/embed/languages'), join(outDir, 'src/embed/languages'), { recursive: true });
// The script /embed.js serves: the embed with the form evaluator bundled in, made once here from the sources
// (as the server makes it when run from them), so a built server never bundles.
{
  const script = pathToFileURL(join(root, 'src/embed/script.ts')).href;
  const served = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', `process.stdout.write((await import(${JSON.stringify(script)})).embedScript())`], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(join(outDir, 'src/embed/served.js'), served);
}
// The dashboard's front end is served as files, as written (no build step of its own).
if (existsSync(join(root, 'src/dashboard/assets'))) cpSync(join(root, 'src/dashboard/assets'), join(outDir, 'src/dashboard/assets'), { recursive: true });
mkdirSync(join(outDir, 'docs'), { recursive: true });
copyFileSync(join(root, 'docs/api.md'), join(outDir, 'docs/api.md'));

// The document from the sources as the server builds it (run by tsx, as `npm start` runs them).
const clientDir = join(outDir, 'client');
mkdirSync(clientDir, { recursive: true });
const documentText = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/openapi-document.ts')], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
writeFileSync(join(clientDir, 'openapi.json'), documentText);
const { default: openapiTS, astToString } = await import('openapi-typescript');
const types = astToString(await openapiTS(JSON.parse(documentText)));
writeFileSync(
  join(clientDir, 'api.d.ts'),
  `// The API's paths, operations and schemas as TypeScript types, made by openapi-typescript from openapi.json beside it.\n// With openapi-fetch: createClient<paths>({ baseUrl }).\n${types}`,
);
