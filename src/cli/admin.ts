/**
 * `npm run admin`: the admin command line in its own process (program.ts
 * holds the commands). Exit status as `run` answers it.
 */
import { OutputClosed, run } from './program.js';

/** Set once stdout's reader has gone (`admin events | head`): the job stops at its next line, quietly. */
let outputClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  outputClosed = true;
});

process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  stdout: (line) => {
    if (outputClosed) throw new OutputClosed();
    process.stdout.write(`${line}\n`);
  },
  stderr: (line) => process.stderr.write(`${line}\n`),
});
