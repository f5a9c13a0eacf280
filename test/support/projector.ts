/**
 * A process that only runs projections over an existing store, printing
 * "applying" once it has started, for the crash tests to kill mid-batch.
 *   projector.ts DIR
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { openServices } from '../../src/services.js';

const services = await openServices(loadConfig({ DATA_DIR: process.argv[2]!, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
process.stdout.write('applying\n');
await services.projections.catchUp();
process.stdout.write('done\n');
await services.close();
