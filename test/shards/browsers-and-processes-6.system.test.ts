// Shard 6 of the system tier: see test/support/shards.ts.
import { runShard } from '../support/shards.js';

await runShard(import.meta.url);
