import { readFileSync } from 'node:fs';
import type { App } from '../http/instance.js';

/** The script site owners paste; read once, served to every origin. */
const SCRIPT = readFileSync(new URL('./embed.js', import.meta.url), 'utf8');

export function embedRoute(app: App): void {
  app.get('/embed.js', { config: { publicCors: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(SCRIPT),
  );
}
