import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_FILE = 'secret';
const FILE = SECRET_FILE;

/**
 * D2: without SECRET the service makes one on first start and keeps it in
 * DATA_DIR, so tokens and hashes stay valid across restarts. `wx` makes the
 * first writer win when two processes start at once.
 */
export function loadOrCreateSecret(dataDir: string): string {
  const path = join(dataDir, FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readFileSync(path, 'utf8').trim();
}
