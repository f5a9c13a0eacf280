import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where the server listens, written in DATA_DIR when it starts listening, so
 * that the admin CLI (which may run without the server's HOST and PORT) can
 * name the server's real address in the links it prints.
 */
export const ADDRESS_FILE = 'server-address';

/** Records `url` as the server's address; a DATA_DIR it cannot write only loses the record. */
export function recordAddress(dataDir: string, url: string): boolean {
  try {
    writeFileSync(join(dataDir, ADDRESS_FILE), `${url}\n`);
    return true;
  } catch {
    return false;
  }
}

/** The address the server recorded, if it did and it reads as an http(s) URL. */
export function recordedAddress(dataDir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, ADDRESS_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? text.replace(/\/$/, '') : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the record at shutdown, unless another server on the same DATA_DIR has written its own since. */
export function forgetAddress(dataDir: string, url: string): void {
  if (recordedAddress(dataDir) === url) rmSync(join(dataDir, ADDRESS_FILE), { force: true });
}
