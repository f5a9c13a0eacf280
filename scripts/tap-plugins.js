// Run before every test script. tap builds its test class with the plugins
// `.taprc` names and rebuilds it when the two differ, but only for the next
// run: the run that notices still starts every test file with the loaders of
// the old build. On a fresh install that build includes the ts-node loader,
// which tap's TypeScript plugin adds and `.taprc` turns off (the suite runs
// through tsx); loaded beside tsx it costs about 6 CPU seconds a file, which
// doubled the suite's time on a clean clone. So the build is brought in line
// here, before tap starts, and only when it differs.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';

const config = await TapConfig.load();
if (config.pluginSignature !== signature) {
  const tap = fileURLToPath(new URL('../node_modules/.bin/tap', import.meta.url));
  execFileSync(tap, ['build'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
