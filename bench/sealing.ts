/**
 * `npm run bench -- sealing`: what sealing personal fields costs, on the
 * codec alone over the embedded store's key file (kernel/personal.ts):
 * a submit's seal, one response per call, first one at a time and then 32
 * at once (as the 32 connections of the submit scenario), then 32 at once
 * with ids made ahead with their keys (kernel/reserved-subjects.ts, as the
 * server hands them out under load); and the opening
 * of 20,000 sealed responses read 500 at a time, as a rebuild reads them.
 * BENCH_SEALED sets that count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalog, personalData } from '../src/domain-events.js';
import type { StoredEvent } from '../src/infra/event-store/port.js';
import { openSqliteSubjectKeys } from '../src/infra/subject-keys/sqlite.js';
import { createIdGenerator } from '../src/infra/ids.js';
import { PersonalCodec } from '../src/kernel/personal.js';
import { ReservedSubjects } from '../src/kernel/reserved-subjects.js';

const SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const COUNT = Number(process.env.BENCH_SEALED ?? 20_000);
const METADATA = { browser: 'Chrome', browser_version: '126.0', device: 'Desktop' as const, os: 'Linux', ip_hash: 'a'.repeat(64), language: 'en', completion_time_ms: 4200, page_url: 'https://shop.example/', page_title: 'Shop' };
const meta = { occurred_at: new Date().toISOString(), actor: 'bench' };
const response = (n: number, id = `rsp_${n}`) =>
  catalog.serialize({ type: 'ResponseSubmitted', data: { response_id: id, account_id: 'acc_1', widget_id: 'wgt_1', answers: { rating: 1 + (n % 5), comment: 'Fine, thanks' }, metadata: METADATA, submitted_at: new Date(1_790_000_000_000 + n).toISOString() } }, meta);

export async function sealingOnly(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sealing-'));
  const codec = new PersonalCodec(personalData, openSqliteSubjectKeys(dir), SECRET);
  const load = loadavg()[0]!.toFixed(1);
  let n = 0;
  const t1 = performance.now();
  const single = 200;
  for (let i = 0; i < single; i++) await codec.seal([response(n++)]);
  const oneAtATime = (performance.now() - t1) / single;
  const t2 = performance.now();
  const rounds = 100;
  for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: 32 }, () => codec.seal([response(n++)])));
  const thirtyTwo = (performance.now() - t2) / (rounds * 32);
  const reserved = new ReservedSubjects(codec, createIdGenerator(), ['rsp']);
  const t5 = performance.now();
  for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: 32 }, () => codec.seal([response(n++, reserved.ids('rsp'))])));
  const thirtyTwoReserved = (performance.now() - t5) / (rounds * 32);
  await reserved.close();
  const stored: StoredEvent[] = [];
  for (let done = 0; done < COUNT; done += 500) {
    const sealed = await codec.seal(Array.from({ length: 500 }, () => response(n++)));
    for (const event of sealed) stored.push({ ...event, streamId: `response-${stored.length}`, revision: 0n, position: BigInt(stored.length + 1), recordedAt: meta.occurred_at } as unknown as StoredEvent);
  }
  const cpu3 = process.cpuUsage();
  const t3 = performance.now();
  for (let at = 0; at < stored.length; at += 500) await codec.open(stored.slice(at, at + 500));
  const open = ((performance.now() - t3) * 1000) / stored.length;
  const used3 = process.cpuUsage(cpu3);
  const openCpu = (used3.user + used3.system) / stored.length;
  // A list of 100 as the responses read model keeps them (its sealed envelope), the same page asked for again and again.
  const docs = (await codec.open(stored.slice(0, 100))).map((event) => ({ id: event!.data.response_id, parent_id: 'wgt_1', submitted_at: event!.data.submitted_at, sealed: event!.sealed }));
  const pages = Number(process.env.BENCH_LIST_PAGES ?? 300);
  const cpu4 = process.cpuUsage();
  const t4 = performance.now();
  for (let i = 0; i < pages; i++) await codec.reveal(docs);
  const list = (performance.now() - t4) / pages;
  const used4 = process.cpuUsage(cpu4);
  const listCpu = (used4.user + used4.system) / 1000 / pages;
  await codec.keys.close();
  rmSync(dir, { recursive: true, force: true });
  const figures = { load_average: Number(load), seal_one_at_a_time_ms: Number(oneAtATime.toFixed(2)), seal_32_at_once_ms: Number(thirtyTwo.toFixed(3)), seal_32_at_once_reserved_ms: Number(thirtyTwoReserved.toFixed(3)), open_per_event_us: Number(open.toFixed(1)), open_events_per_second: Math.round(1e6 / open), open_cpu_per_event_us: Number(openCpu.toFixed(1)), reveal_list_100_ms: Number(list.toFixed(3)), reveal_list_100_cpu_ms: Number(listCpu.toFixed(3)) };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
