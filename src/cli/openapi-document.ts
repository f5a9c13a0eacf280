import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { openServices } from '../services.js';
import { buildApp } from '../app.js';

/**
 * The OpenAPI document a server with default settings serves at
 * `/api/openapi.json` (its `servers` is `/`), made without one listening:
 * `npm run build` writes it, and client types from it, into the build.
 * The routes need services to be registered, so a throwaway store is opened
 * for the moment it takes.
 */
export async function openApiDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const services = await openServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEALS: 'off' }), { logger: pino({ level: 'silent' }) });
    try {
      const app = await buildApp(services);
      try {
        await app.ready();
        return app.swagger();
      } finally {
        await app.close();
      }
    } finally {
      await services.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// `node --import tsx src/cli/openapi-document.ts`: the document on stdout.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
}
