import { dirname } from 'node:path';
import type { SubjectKeyStore } from './port.js';

/** Where a process finds the subject keys: a file (read-only for a point-in-time copy), or MongoDB. */
export type SubjectKeysAt = { kind: 'sqlite'; path: string; readonly: boolean; waitMs?: number } | { kind: 'mongodb'; url: string; timeoutMs?: number };

export async function openSubjectKeysAt(at: SubjectKeysAt): Promise<SubjectKeyStore> {
  if (at.kind === 'mongodb') {
    const { openMongoSubjectKeys } = await import('./mongo.js');
    return openMongoSubjectKeys(at.url, at.timeoutMs);
  }
  const { openSqliteSubjectKeys } = await import('./sqlite.js');
  return openSqliteSubjectKeys(dirname(at.path), { path: at.path, readonly: at.readonly, ...(at.waitMs === undefined ? {} : { busyTimeoutMs: at.waitMs }) });
}
