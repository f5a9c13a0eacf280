/** MongoDB's error code for a server whose disk is full (`OutOfDiskSpace`). */
const MONGO_OUT_OF_DISK_SPACE = 14031;

/**
 * Whether an error, or one it wraps, says the store has no room left: SQLite
 * cannot grow its file (or its page limit), the file system is full, or the
 * MongoDB server is out of disk space.
 */
export function isStorageFull(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    const { code, codeName } = current as { code?: unknown; codeName?: unknown };
    if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === MONGO_OUT_OF_DISK_SPACE || codeName === 'OutOfDiskSpace') return true;
  }
  return false;
}

/**
 * Remembers that a write failed for lack of room, so that readiness says so
 * until a probe of the store finds room again: a load balancer then sends
 * traffic elsewhere instead of to a server that can only refuse it.
 */
export class StorageWatch {
  private full = false;

  markFull(): void {
    this.full = true;
  }

  /** Room as far as this process knows; while marked full, only a probe that succeeds clears it. */
  async hasRoom(probe: (() => Promise<boolean>) | undefined): Promise<boolean> {
    if (!this.full) return true;
    // A store that cannot be probed is trusted again: its own refusals mark it once more.
    const room = probe ? await probe().catch(() => false) : true;
    if (room) this.full = false;
    return room;
  }
}
