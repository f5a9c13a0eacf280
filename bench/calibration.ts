/**
 * How fast this machine is today, on work that does not change with the
 * code: the same virtual machine has run the same build at less than half
 * its speed on another day, so figures from different days are read beside
 * these before they are compared.
 */
import { hash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export interface Calibration {
  /** 1,000,000 SHA-256 digests of short strings. */
  sha256Ms: number;
  /** 200,000 JSON round trips of a small response-like object. */
  jsonMs: number;
  /** Durable single-row commits a second (WAL, synchronous=FULL), over 2,000. */
  commitsPerSecond: number;
}

export function calibrate(): Calibration {
  let started = performance.now();
  let sink = 0;
  for (let i = 0; i < 1_000_000; i++) sink += hash('sha256', `calibration ${i}`, 'hex').length;
  const sha256Ms = Math.round(performance.now() - started);

  started = performance.now();
  const doc = { id: 'rsp_0', answers: { rating: 4, comment: 'Quick and clear' }, metadata: { browser: 'Chrome', device: 'Desktop', language: 'en' }, submitted_at: new Date(0).toISOString() };
  for (let i = 0; i < 200_000; i++) sink += (JSON.parse(JSON.stringify({ ...doc, id: `rsp_${i}` })) as { id: string }).id.length;
  const jsonMs = Math.round(performance.now() - started);

  const dir = mkdtempSync(join(tmpdir(), 'bench-calibration-'));
  try {
    const db = new Database(join(dir, 'c.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    started = performance.now();
    for (let i = 0; i < 2000; i++) insert.run('x'.repeat(200));
    const commitsPerSecond = Math.round(2000 / ((performance.now() - started) / 1000));
    db.close();
    if (sink < 0) throw new Error('unreachable');
    return { sha256Ms, jsonMs, commitsPerSecond };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const describeCalibration = (c: Calibration): string =>
  `calibration: 1M SHA-256 ${c.sha256Ms} ms, 200k JSON round trips ${c.jsonMs} ms, ${c.commitsPerSecond.toLocaleString('en')} durable commits/s`;
