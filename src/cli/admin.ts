/**
 * `npm run admin`: the admin command line in its own process (program.ts
 * holds the commands). Exit status as `run` answers it.
 */
import { OutputClosed, run } from './program.js';

/** Set once stdout's reader has gone (`admin events | head`): the job stops at its next line, quietly. */
let outputClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') {
    outputClosed = true;
    return;
  }
  // The output could not be written (a full disk, a closed file): what the command did is done, and its answer is lost.
  process.stderr.write(`admin: could not write the output (${error.code ?? error.message}): the command ran, and what it printed is lost\n`);
  process.exit(1);
});

process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  stdout: (line) => {
    if (outputClosed) throw new OutputClosed();
    process.stdout.write(`${line}\n`);
  },
  stderr: (line) => process.stderr.write(`${line}\n`),
});
