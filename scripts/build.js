// `npm run build [-- OUT_DIR]`: compiles src/ and projections/ into OUT_DIR
// (dist/ by default), then copies the embed script beside its route as it is
// (and the dashboard's files beside theirs),
// and the API reference where the server serves it from (OUT_DIR/docs/).
// Browsers load that script as a classic script, so it must reach them byte
// for byte as written: compiled as a module it would end in `export {};`,
// which a classic script refuses.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = resolve(process.argv[2] ?? join(root, 'dist'));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit' });
} catch {
  // tsc has printed the errors.
  process.exit(1);
}
copyFileSync(join(root, 'src/embed/embed.js'), join(outDir, 'src/embed/embed.js'));
// The dashboard's front end is served as files, as written (no build step of its own).
if (existsSync(join(root, 'src/dashboard/assets'))) cpSync(join(root, 'src/dashboard/assets'), join(outDir, 'src/dashboard/assets'), { recursive: true });
mkdirSync(join(outDir, 'docs'), { recursive: true });
copyFileSync(join(root, 'docs/api.md'), join(outDir, 'docs/api.md'));
