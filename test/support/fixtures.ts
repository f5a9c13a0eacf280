import { readFileSync } from 'node:fs';
import type { JsonObject } from '../../src/infra/event-store/port.js';

/** A stored event of test/fixtures/events, as an earlier version of the service wrote it. */
export interface StoredFixture {
  type: string;
  stream: string;
  data: JsonObject;
  metadata: JsonObject & { schema_version: number; occurred_at: string };
}

export function fixture(type: string, version = 1): StoredFixture {
  return JSON.parse(readFileSync(new URL(`../fixtures/events/${type}.v${version}.json`, import.meta.url), 'utf8'));
}
