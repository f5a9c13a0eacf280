import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { targetOf } from '../erasure/state.js';
import { haltMessage } from '../kernel/feed/halt.js';
import { SessionActivity } from '../dashboard/activity.js';
import { AppError } from '../kernel/errors.js';
import { UnreadableEvent, type Recorded } from '../kernel/event-catalog.js';
import { sealedOf } from '../kernel/personal.js';
import type { DomainEvent } from '../domain-events.js';
import type { FeedRecord, JsonObject } from '../infra/event-store/port.js';
import { systemClock } from '../infra/ids.js';
import { openSqliteEventStore, type SqliteEventStore } from '../infra/event-store/sqlite.js';
import { loadOrCreateSecret, SECRET_FILE } from '../infra/secret.js';
import { DATABASE_FILE } from '../infra/sqlite.js';
import { writePointInTime } from '../seals/point-in-time.js';
import { erasedBy } from '../seals/verify.js';
import { openServices, subjectKeysAt, type Services } from '../services.js';

type Output = (line: string) => void;

/**
 * Makes `--out` a new directory, or takes an empty one. Made one level at a
 * time: Node's recursive mkdir loops forever where the file system refuses
 * a directory (under /proc, say).
 */
function makeEmptyDirectory(target: string): void {
  const refused = (why: string) => new AppError('validation_error', `--out ${target} ${why}: give a new or empty directory`);
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) throw refused('is a file');
    if (readdirSync(target).length > 0) throw refused('is not empty');
    return;
  }
  const missing: string[] = [];
  for (let dir = target; !existsSync(dir); dir = dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (error) {
      throw refused(`cannot be made (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
}

const PAGE = 10_000;

/** Whether a path is the directory or inside it, links followed as far as the path exists. */
function within(path: string, directory: string): boolean {
  const real = (p: string): string => {
    const missing: string[] = [];
    let dir = resolve(p);
    while (!existsSync(dir) && dirname(dir) !== dir) {
      missing.unshift(basename(dir));
      dir = dirname(dir);
    }
    return join(realpathSync(dir), ...missing);
  };
  const from = relative(real(directory), real(path));
  return from === '' || (from !== '..' && !from.startsWith(`..${sep}`) && !isAbsolute(from));
}

/**
 * `admin rebuild --until ISO --out DIR`: copies every event recorded at or
 * before the moment (positions, ids and times kept, so its seals verify)
 * into a new embedded store in DIR and builds the read models there, as they
 * stood then. DIR is marked read-only first, so that a copy left half-built
 * is never served for writing.
 *
 * Content erased since is not in the copy: lawful erasure reaches back.
 */
export async function rebuildAt(services: Services, values: { until: Date; out: string }, out: Output): Promise<number> {
  const target = resolve(values.out);
  // A moment to come would show the read models as they never stood (an object closed by a date not yet reached).
  const now = (services.readOnly ? systemClock : services.clock)();
  if (values.until.getTime() > now.getTime()) {
    throw new AppError('validation_error', `--until ${values.until.toISOString()} is in the future (it is ${now.toISOString()}): the history holds nothing later than now`);
  }
  if (!services.config.EVENTSTORE_URL && within(target, services.config.DATA_DIR)) {
    // Erasure leaves DATA_DIR holding nothing of what it erased; a copy in it would hold what the copy's moment held.
    throw new AppError('validation_error', `--out must be another directory than DATA_DIR, and outside it: a copy keeps what is erased later, and nothing erased may stay in DATA_DIR`);
  }
  if (existsSync(join(target, DATABASE_FILE))) throw new AppError('validation_error', `--out ${target} already holds a store: give a new or empty directory`);
  const source = services.readOnly;
  if (source && values.until.getTime() > Date.parse(source.until)) {
    throw new AppError('validation_error', `--until is after ${source.until}, the moment of this copy, which holds nothing later: copy from the store it was copied from`);
  }
  // A copy's own clock stops at its moment.
  const clock = source ? systemClock : services.clock;
  const started = performance.now();
  const existed = existsSync(target);
  makeEmptyDirectory(target);
  // A copy left half-built would verify as a shorter history, and be served as one: nothing of it stays.
  const remove = () => {
    for (const entry of existed ? readdirSync(target) : []) rmSync(join(target, entry), { recursive: true, force: true });
    if (!existed) rmSync(target, { recursive: true, force: true });
  };
  // Stopped by a signal (Ctrl-C), too; should even that fail (kill -9), the mark it keeps says the copy is unfinished.
  const stopped = (signal: NodeJS.Signals) => {
    remove();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', stopped);
  process.once('SIGTERM', stopped);
  try {
    return await buildCopy(services, values, target, clock, started, out);
  } catch (error) {
    remove();
    throw error;
  } finally {
    process.off('SIGINT', stopped);
    process.off('SIGTERM', stopped);
  }
}

async function buildCopy(services: Services, values: { until: Date; out: string }, target: string, clock: () => Date, started: number, out: Output): Promise<number> {
  const source = services.readOnly;
  let last = 0n;
  let events = 0;
  // A copy of a copy: what was erased after the first copy's moment is gone from both, and still in their seals.
  const erasedAfter = new Map<string, Set<string>>(Object.entries(source?.erased_after_by_object ?? {}).map(([object, ids]) => [object, new Set(ids)]));
  if (source?.erased_after?.length) erasedAfter.set('', new Set(source.erased_after));
  const keys = subjectKeysAt(services.config, source);
  const keyStore = keys.kind === 'sqlite' ? { key_store: resolve(keys.path) } : {};
  writePointInTime(target, { until: values.until.toISOString(), position: '0', events: 0, source: services.events.kind, built_at: clock().toISOString(), ...keyStore, building: true });
  // Tokens and keys of the copy are those of the original.
  if (!services.config.SECRET) writeFileSync(join(target, SECRET_FILE), loadOrCreateSecret(services.config.DATA_DIR), { flag: 'wx', mode: 0o600 });

  // What was erased after the moment is gone from the copy too, and its seals still list it: verify there needs the ids.
  const noteErasure = (record: FeedRecord) => {
    if (record.type !== 'ResponsesErased') return;
    // The schema requires the parent: a record without one is no longer what was written, which verify reports.
    const { ids, parentId = '' } = erasedBy(record);
    const ofObject = erasedAfter.get(parentId) ?? new Set<string>();
    for (const id of ids) ofObject.add(id);
    erasedAfter.set(parentId, ofObject);
  };
  /** Every submission a record of the store names erased, before the moment or after it. */
  const erased = new Set<string>();
  const noteErased = (record: FeedRecord) => {
    if (record.type === 'ResponsesErased') for (const id of erasedBy(record).ids) erased.add(id);
  };
  const copy = openSqliteEventStore(target);
  try {
    const until = values.until.getTime();
    let past = false;
    let after = 0n;
    for (;;) {
      const page = await services.events.readFeed({ after, limit: PAGE });
      if (page.length === 0) break;
      const kept: FeedRecord[] = [];
      for (const record of page) {
        past ||= Date.parse(record.recordedAt) > until;
        if (!past) kept.push(record);
        else noteErasure(record);
        noteErased(record);
      }
      copy.importFeed(kept);
      events += kept.length;
      if (kept.length > 0) last = kept[kept.length - 1]!.position;
      after = page[page.length - 1]!.position;
    }
    // An erasure records what it erases, then deletes it: the copy may hold streams deleted since it read them,
    // and streams a record names that were not deleted yet (an erasure running, or stopped before it deleted).
    let gone = await removedSince(services.events, copy, services.catalog, erased);
    for (let round = 1; ; round++) {
      if (gone.size > 0) {
        await copy.deleteStreams([...gone]);
        await copy.expunge();
        events = copy.countEvents();
      }
      // Records appended meanwhile, whose streams the copy may hold still: a few rounds, as erasures may keep coming.
      const since = new Set<string>();
      for (let page = await services.events.readFeed({ after, limit: PAGE }); page.length > 0; page = await services.events.readFeed({ after, limit: PAGE })) {
        for (const record of page) {
          noteErasure(record);
          if (record.type === 'ResponsesErased') for (const id of erasedBy(record).ids) since.add(id);
        }
        after = page[page.length - 1]!.position;
      }
      if (since.size === 0 || round === ROUNDS) break;
      gone = await removedSince(services.events, copy, services.catalog, since);
    }
  } finally {
    await copy.close();
  }
  writePointInTime(target, {
    until: values.until.toISOString(),
    position: String(last),
    events,
    source: services.events.kind,
    built_at: clock().toISOString(),
    ...keyStore,
    erased_after_by_object: Object.fromEntries([...erasedAfter].sort(([a], [b]) => a.localeCompare(b)).map(([object, ids]) => [object, [...ids].sort()])),
  });

  const { EVENTSTORE_URL: _events, MONGODB_URL: _readModels, ...config } = services.config;
  const pointInTime = await openServices({ ...config, DATA_DIR: target, ROLE: 'all' }, { logger: services.logger });
  try {
    await pointInTime.projections.rebuild();
    const halted = pointInTime.projections.halted;
    if (halted) throw new Error(haltMessage(halted));
    // Made here, empty, so that serving the copy creates nothing in it.
    await pointInTime.readModels.ensureCollections(SessionActivity.collections);
  } finally {
    await pointInTime.close();
  }
  const seconds = (performance.now() - started) / 1000;
  out(JSON.stringify({ rebuilt: true, until: values.until.toISOString(), out: target, events, position: String(last), seconds: Number(seconds.toFixed(3)), read_only: true }));
  return 0;
}

/** Walks of the copy for erasures recorded while it was made, at most: they may keep coming, and one recorded later is one after the copy. */
const ROUNDS = 5;

/** The id in a submission's stored text, as the catalog writes it (its first field); undefined where it is laid out otherwise. */
const SUBMISSION_ID = /^\{"(?:response_id|vote_id)":"([^"\\]+)"/;

/**
 * The streams the copy holds that must go from it: those the store no
 * longer holds, deleted (erasure deletes whole streams) since the copy read
 * them, and those of the submissions in `erased`, whose erasure was recorded
 * before its streams were deleted and had not deleted them yet. The two
 * feeds are walked side by side, by position; a submission of an erased id
 * is read as the erasure process reads it, for every stream it deletes.
 */
async function removedSince(store: Services['events'], copy: SqliteEventStore, catalog: Services['catalog'], erased: ReadonlySet<string>): Promise<Set<string>> {
  const gone = new Set<string>();
  let stored: FeedRecord[] = [];
  let i = 0;
  let storeAfter = 0n;
  let storeDone = false;
  const erasedSubmission = (record: FeedRecord): string[] => {
    if (erased.size === 0 || (record.type !== 'ResponseSubmitted' && record.type !== 'ResponseProgressed' && record.type !== 'VoteCast')) return [];
    const id = SUBMISSION_ID.exec(record.data)?.[1];
    if (id !== undefined && !erased.has(id)) return [];
    let event;
    try {
      const data = JSON.parse(record.data) as JsonObject;
      // Sealed, its personal fields cannot be read here, nor need they be: the ids and streams erasure reads are plain.
      if (sealedOf(data)) event = { type: record.type, data, streamId: record.streamId } as unknown as Recorded<DomainEvent>;
      else event = catalog.parse({ ...record, data, metadata: JSON.parse(record.metadata) as JsonObject });
    } catch (error) {
      // The copy's rebuild halts before it, naming it; nothing of it is taken for a submission here.
      if (error instanceof SyntaxError || error instanceof UnreadableEvent) return [];
      throw error;
    }
    const target = event && targetOf(event);
    return target && erased.has(target.id) ? target.streams : [];
  };
  for (let after = 0n; ; ) {
    const page = await copy.readFeed({ after, limit: PAGE });
    if (page.length === 0) return gone;
    for (const record of page) {
      for (;;) {
        if (i === stored.length) {
          if (storeDone) break;
          stored = await store.readFeed({ after: storeAfter, limit: PAGE });
          i = 0;
          if (stored.length === 0) {
            storeDone = true;
            break;
          }
          storeAfter = stored[stored.length - 1]!.position;
        }
        if (stored[i]!.position < record.position) i++;
        else break;
      }
      if (i === stored.length || stored[i]!.position !== record.position) gone.add(record.streamId);
      for (const stream of erasedSubmission(record)) gone.add(stream);
    }
    after = page[page.length - 1]!.position;
  }
}
