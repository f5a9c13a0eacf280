import type { EventStore, EventSubscription, NewEvent, ReadAllOptions, StoredEvent, StreamAppend } from '../infra/event-store/port.js';
import type { PersonalCodec } from './personal.js';

const kept = (events: Array<StoredEvent | undefined>): StoredEvent[] => events.filter((e): e is StoredEvent => e !== undefined);

/**
 * The event store as the service uses it, over either adapter unchanged:
 * appends seal the personal fields of the events that declare them
 * (PersonalCodec), reads open them, and an event whose key was erased is
 * not read at all, as if its stream were deleted. `readFeed` hands the
 * records over as stored, sealed, for the seals to hash what is on disk.
 */
export class PersonalEventStore implements EventStore {
  readonly kind: EventStore['kind'];
  readonly atomicAcrossStreams: boolean;

  constructor(
    readonly inner: EventStore,
    readonly codec: PersonalCodec,
  ) {
    this.kind = inner.kind;
    this.atomicAcrossStreams = inner.atomicAcrossStreams;
    if (inner.hasRoom) this.hasRoom = () => inner.hasRoom!();
  }

  hasRoom?: () => Promise<boolean>;

  async append(streamId: string, events: NewEvent[], expectedRevision: Parameters<EventStore['append']>[2]) {
    return this.inner.append(streamId, await this.codec.seal(events), expectedRevision);
  }

  async appendToStreams(parts: StreamAppend[]) {
    const sealed = await this.codec.seal(parts.flatMap((p) => p.events));
    let at = 0;
    return this.inner.appendToStreams(parts.map((part) => ({ ...part, events: sealed.slice(at, (at += part.events.length)) })));
  }

  async readStream(streamId: string, options?: Parameters<EventStore['readStream']>[1]) {
    return kept(await this.codec.open(await this.inner.readStream(streamId, options)));
  }

  streamState(streamId: string) {
    return this.inner.streamState(streamId);
  }

  readAll(options: ReadAllOptions) {
    return this.page((after) => this.inner.readAll({ ...options, after }), options.after ?? 0n);
  }

  readAccount(accountId: string, options: ReadAllOptions) {
    return this.page((after) => this.inner.readAccount(accountId, { ...options, after }), options.after ?? 0n);
  }

  readFeed(options: ReadAllOptions) {
    return this.inner.readFeed(options);
  }

  subscribe(options: Parameters<EventStore['subscribe']>[0]): EventSubscription {
    const inner = this.inner.subscribe(options);
    const codec = this.codec;
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const batch of inner) {
          const opened = kept(await codec.open(batch));
          if (opened.length > 0) yield opened;
        }
      },
    };
  }

  deleteStreams(streamIds: string[]) {
    return this.inner.deleteStreams(streamIds);
  }

  expunge() {
    return this.inner.expunge();
  }

  headPosition() {
    return this.inner.headPosition();
  }

  endPosition() {
    return this.inner.endPosition();
  }

  async close() {
    await this.inner.close();
    await this.codec.keys.close();
  }

  /**
   * A page of the feed without the erased events; read on past a page that
   * held only erased ones, since an empty page tells its reader the feed
   * ends there.
   */
  private async page(read: (after: bigint) => Promise<StoredEvent[]>, after: bigint): Promise<StoredEvent[]> {
    for (;;) {
      const raw = await read(after);
      if (raw.length === 0) return raw;
      const opened = kept(await this.codec.open(raw));
      if (opened.length > 0) return opened;
      after = raw[raw.length - 1]!.position;
    }
  }
}

/** The adapter beneath the sealing store, for what only the adapter offers (the embedded store's counts and cut-offs). */
export const adapterOf = (store: EventStore): EventStore => (store instanceof PersonalEventStore ? store.inner : store);
