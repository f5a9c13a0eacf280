import { catalog } from './src/domain-events.js';
import { openSqliteEventStore } from './src/infra/event-store/sqlite.js';
import { projections } from './projections/index.js';
import { pack, prepare } from './projections/replay.js';
const stage = Number(process.env.STAGE ?? 3);
const events = openSqliteEventStore(process.env.DATA_DIR!);
const t0 = performance.now();
let position = 0n, n = 0;
const B = 500;
for (;;) {
  const batch = await events.readAll({ after: position, limit: B });
  if (batch.length === 0) break;
  n += batch.length;
  if (stage >= 2) for (const p of prepare(projections, catalog, batch, position, { written: true })) { if (p.kind === 'batch') { const packed = pack(p, projections); if (stage >= 3) structuredClone(packed); } }
  position = batch[batch.length - 1]!.position;
}
console.log(stage, n, ((performance.now() - t0) / 1000).toFixed(2));
await events.close();
