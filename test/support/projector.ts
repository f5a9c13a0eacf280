/**
 * A process that only runs projections over an existing store, as the admin
 * CLI does, for the crash tests to kill in the middle of a batch.
 *   projector.ts DIR
 *
 * It reports each read-model write as it happens, on stdout:
 *   writing POSITION     a batch is about to be applied (checkpoints move to POSITION)
 *   committed POSITION   that batch is committed
 * and after its second committed batch it stops making progress and waits to
 * be killed, so however late the kill lands, the feed is never applied to its
 * end by one run.
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { openServices } from '../../src/services.js';

const services = await openServices(loadConfig({ DATA_DIR: process.argv[2]!, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
const { readModels } = services;
const write = readModels.write.bind(readModels);
let committed = 0;
readModels.write = async (ops, moves = []) => {
  const next = moves.reduce((max, move) => (move.next > max ? move.next : max), 0n);
  // Pipes to a parent are written synchronously, so the parent can read this before the write starts.
  process.stdout.write(`writing ${next}\n`);
  const applied = await write(ops, moves);
  if (!applied) return applied;
  process.stdout.write(`committed ${next}\n`);
  if (++committed === 2) {
    setInterval(() => undefined, 60_000);
    await new Promise<never>(() => undefined);
  }
  return applied;
};
await services.projections.catchUp();
process.stdout.write('done\n');
await services.close();
