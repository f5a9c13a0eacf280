/**
 * The CRUD peer: what a user would write without event sourcing, on the same
 * stack. fastify + zod + better-sqlite3, one durable insert per request
 * (WAL, synchronous=FULL, as the service's event store), and a page/limit
 * list with a total. PEER_ROWS responses are there before the load starts,
 * like the service's deep widget.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const dir = process.env.DATA_DIR!;
mkdirSync(dir, { recursive: true });
const db = new Database(join(dir, 'peer.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS responses (
  id TEXT PRIMARY KEY, widget_id TEXT NOT NULL, answers TEXT NOT NULL, metadata TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_by_widget ON responses (widget_id, created_at DESC, id)`);

const insert = db.prepare('INSERT INTO responses (id, widget_id, answers, metadata, created_at) VALUES (?, ?, ?, ?, ?)');
const page = db.prepare('SELECT id, answers, metadata, created_at FROM responses WHERE widget_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?');
const total = db.prepare('SELECT count(*) AS n FROM responses WHERE widget_id = ?');

const rows = Number(process.env.PEER_ROWS ?? 0);
if ((total.get('deep') as { n: number }).n < rows) {
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(`rsp_${i}`, 'deep', JSON.stringify({ rating: 1 + (i % 5), comment: 'Fine, thanks' }), '{}', new Date(1_790_000_000_000 + i).toISOString());
  })();
}

const Submit = z.object({
  answers: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  metadata: z.object({ pageUrl: z.string().max(2000).optional(), pageTitle: z.string().max(500).optional(), fingerprint: z.string().max(200).optional() }).optional(),
});
const List = z.object({ page: z.coerce.number().int().min(1).default(1), limit: z.coerce.number().int().min(1).max(100).default(20) });

const app = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>();
app.setValidatorCompiler(validatorCompiler);
app.setSerializerCompiler(serializerCompiler);
app.post('/widgets/:id/responses', { schema: { body: Submit, params: z.object({ id: z.string() }) } }, async (request, reply) => {
  const id = randomUUID();
  insert.run(id, request.params.id, JSON.stringify(request.body.answers), JSON.stringify(request.body.metadata ?? {}), new Date().toISOString());
  return reply.code(201).send({ success: true, id });
});
app.get('/widgets/:id/responses', { schema: { querystring: List, params: z.object({ id: z.string() }) } }, async (request) => {
  const { page: n, limit } = request.query;
  const items = (page.all(request.params.id, limit, (n - 1) * limit) as Array<{ id: string; answers: string; metadata: string; created_at: string }>).map((row) => ({
    id: row.id,
    answers: JSON.parse(row.answers),
    metadata: JSON.parse(row.metadata),
    created_at: row.created_at,
  }));
  const count = (total.get(request.params.id) as { n: number }).n;
  return { responses: items, pagination: { page: n, limit, total: count, pages: Math.ceil(count / limit) } };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
