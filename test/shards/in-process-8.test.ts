// Shard 8 of the in-process tier: see test/support/shards.ts.
import { runShard } from '../support/shards.js';

await runShard(import.meta.url);
