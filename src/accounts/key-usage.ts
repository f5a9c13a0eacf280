import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../infra/ids.js';
import type { CollectionSpec, ReadModelStore } from '../infra/read-models/port.js';

const EVERY_MS = 60_000;

/**
 * `last_used_at` of API keys. It is not a domain fact worth an event per
 * request, so it lives in its own collection, outside every projection (a
 * rebuild leaves it alone), written at most once a minute per key.
 */
export class KeyUsage {
  static readonly COLLECTION = 'api_key_usage';
  static readonly collections: CollectionSpec[] = [{ name: KeyUsage.COLLECTION, indexes: [] }];
  private readonly written = new Map<string, number>();

  constructor(
    private readonly readModels: ReadModelStore,
    private readonly clock: Clock,
    private readonly logger: Pick<FastifyBaseLogger, 'warn'>,
    /** A point-in-time copy, which records nothing (and holds no use of its keys: key use is not an event). */
    private readonly readOnly = false,
  ) {}

  touch(keyId: string): void {
    if (this.readOnly) return;
    const now = this.clock();
    const last = this.written.get(keyId);
    if (last !== undefined && now.getTime() - last < EVERY_MS) return;
    this.written.set(keyId, now.getTime());
    this.readModels
      .write([{ op: 'put', collection: KeyUsage.COLLECTION, doc: { id: keyId, last_used_at: now.toISOString() } }])
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not record key usage'));
  }

  async lastUsed(keyId: string): Promise<string | null> {
    const doc = await this.readModels.get(KeyUsage.COLLECTION, keyId);
    return typeof doc?.last_used_at === 'string' ? doc.last_used_at : null;
  }
}
