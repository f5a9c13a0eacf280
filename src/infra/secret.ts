import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_FILE = 'secret';
const FILE = SECRET_FILE;

/** The shortest secret taken, from the file as from SECRET (config.ts). */
const MIN_LENGTH = 32;

/**
 * D2: without SECRET the service makes one on first start and keeps it in
 * DATA_DIR, so tokens and hashes stay valid across restarts. Written whole
 * to a file of its own, then linked into place: the first writer wins when
 * two processes start at once, and none reads a file half written. A file
 * holding less than SECRET may (someone's edit, an empty file) is refused:
 * everything signed under it could be forged.
 */
export function loadOrCreateSecret(dataDir: string): string {
  const path = join(dataDir, FILE);
  mkdirSync(dataDir, { recursive: true });
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  const secret = readFileSync(path, 'utf8').trim();
  if (secret.length < MIN_LENGTH) throw new Error(`${path} holds a secret of ${secret.length} characters, fewer than the ${MIN_LENGTH} SECRET must have: replace it with a long random one (or remove it before any data is kept), or set SECRET`);
  return secret;
}
