import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { openServices, type ServiceOptions, type Services } from '../../src/services.js';
import type { Test } from 'tap';

export const silent = pino({ level: 'silent' });

/** The METRICS_TOKEN of test services, unless a test sets its own. */
export const METRICS_TOKEN = 'metrics-token-for-tests';
export const metricsHeaders = { authorization: `Bearer ${METRICS_TOKEN}` };

export function tempDir(t: Test, name = 'data'): string {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Services on a fresh embedded store, closed when the test ends. */
export async function testServices(
  t: Test,
  options: ServiceOptions & { dataDir?: string; env?: Record<string, string> } = {},
): Promise<Services> {
  const dataDir = options.dataDir ?? tempDir(t);
  // No seal appears in a test's history unless it asks for seals.
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEALS: 'off', METRICS_TOKEN, ...options.env });
  const services = await openServices(config, { logger: silent, ...options });
  t.teardown(() => services.close());
  return services;
}

/** Every document of every read model the projections own, in a stable order. */
export async function snapshotReadModels(services: Pick<Services, 'readModels'>): Promise<Record<string, unknown[]>> {
  const { projections } = await import('../../projections/index.js');
  const out: Record<string, unknown[]> = {};
  for (const projection of projections) {
    for (const collection of projection.collections) {
      const docs = await services.readModels.find(collection.name, {}, { sort: [['id', 1]] });
      out[collection.name] = docs;
      const within = collection.rankWithin;
      if (within !== undefined) {
        // The rank order of every group belongs to the read model too.
        const groups = [...new Set(docs.map((doc) => String(doc[within])))].sort();
        out[`${collection.name} ranks`] = await Promise.all(
          groups.map(async (group) => [group, ...(await services.readModels.newestFirst(collection.name, group, { offset: 0, limit: 1e9 })).docs.map((doc) => doc.id)]),
        );
      }
    }
  }
  return out;
}
