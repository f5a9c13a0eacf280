import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The mark of a point-in-time store (`admin rebuild --until`): a DATA_DIR
 * holding it is served read-only, since a command there would fork the
 * history rather than add to it.
 */
export const POINT_IN_TIME_FILE = 'point-in-time.json';

export interface PointInTime {
  /** The moment asked for: every event recorded at or before it, none after. */
  until: string;
  /** The last event copied. */
  position: string;
  events: number;
  /** The store it was copied from. */
  source: 'sqlite' | 'kurrentdb';
  built_at: string;
  /**
   * The responses and votes erased by records after the moment, by the
   * widget, form or poll each record names: the copy holds neither their
   * events nor those records, while its seals still list them. Ids only, as
   * the seals do: `admin verify` on the copy counts them as erased, and
   * `admin audit --object` lists them as erased.
   */
  erased_after_by_object?: Record<string, string[]>;
  /**
   * The subject-key file of the store it was copied from (absolute path):
   * the copy reads personal content with those keys, never a copy of them,
   * so what is erased there later cannot be read here either.
   */
  key_store?: string;
  /** The same ids in one list, as copies made before they were kept by object hold them. */
  erased_after?: string[];
  /** Written first, gone once every event is copied: a copy whose making stopped keeps it, and is neither verified nor served. */
  building?: true;
}

/** The submissions erased after the copy's moment: all of them, or those of one object. */
export function erasedAfter(mark: PointInTime, object?: string): string[] {
  const byObject = mark.erased_after_by_object ?? {};
  if (object !== undefined) return byObject[object] ?? [];
  return [...Object.values(byObject).flat(), ...(mark.erased_after ?? [])];
}

/** A mark that is there but cannot be read: the store is neither served nor changed until it is mended or removed. */
export class UnreadableMark extends Error {
  constructor(path: string, why: string) {
    super(`${path} is not a point-in-time mark as admin rebuild --until writes it (${why}): mend or remove it`);
    this.name = 'UnreadableMark';
  }
}

/** A copy whose making stopped before its events were all copied: a shorter history that must not pass for the whole. */
export class UnfinishedCopy extends UnreadableMark {
  constructor(path: string) {
    super(path, 'the copy was stopped before all its events were copied');
    this.message = `${dataDirOf(path)} holds a point-in-time copy whose making stopped before it was finished: remove it and run admin rebuild --until again`;
    this.name = 'UnfinishedCopy';
  }
}

const dataDirOf = (path: string) => path.slice(0, path.length - POINT_IN_TIME_FILE.length - 1);

/** The mark of DATA_DIR, if any; `building`: also one whose copy is being made (its maker's own reads). */
export function readPointInTime(dataDir: string, options: { building?: boolean } = {}): PointInTime | undefined {
  const path = join(dataDir, POINT_IN_TIME_FILE);
  if (!existsSync(path)) return undefined;
  let mark: unknown;
  try {
    mark = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UnreadableMark(path, (error as Error).message);
  }
  const { until, erased_after: all, erased_after_by_object: byObject } = (mark ?? {}) as { until?: unknown; erased_after?: unknown; erased_after_by_object?: unknown };
  if (typeof until !== 'string' || Number.isNaN(Date.parse(until))) throw new UnreadableMark(path, 'it names no moment in `until`');
  const ids = (value: unknown) => Array.isArray(value) && value.every((id) => typeof id === 'string');
  if (all !== undefined && !ids(all)) throw new UnreadableMark(path, '`erased_after` is not a list of ids');
  if (byObject !== undefined && (byObject === null || typeof byObject !== 'object' || Array.isArray(byObject) || !Object.values(byObject).every(ids))) {
    throw new UnreadableMark(path, '`erased_after_by_object` does not give a list of ids for each object');
  }
  if ((mark as { building?: unknown }).building !== undefined && !options.building) throw new UnfinishedCopy(path);
  return mark as PointInTime;
}

export function writePointInTime(dataDir: string, mark: PointInTime): void {
  writeFileSync(join(dataDir, POINT_IN_TIME_FILE), `${JSON.stringify(mark, null, 2)}\n`);
}
