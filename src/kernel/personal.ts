import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FeedRecord, JsonObject, NewEvent, StoredEvent } from '../infra/event-store/port.js';
import { groupedAdds } from '../infra/subject-keys/grouped.js';
import type { SubjectKeyStore } from '../infra/subject-keys/port.js';
import type { EventDefinition } from './event-catalog.js';

/**
 * Personal content at rest: the fields of an event that hold what a person
 * sent (a response's answers, hidden fields, metadata and consent record)
 * are stored encrypted under a key of their subject (the response or vote),
 * AES-256-GCM. The key is HMAC-SHA-256, under a key derived from SECRET, of
 * the subject and a random salt of its own; the salt is kept apart
 * (SubjectKeyStore). Neither the salt without SECRET nor SECRET without the
 * salt gives the key, so erasing a subject deletes its salt: from then on no
 * copy of its events (a follower, a backup, a raw copy of the files) can be
 * read.
 *
 * It is a storage envelope, not a version of the event: the stored data is
 * the event's other fields as they are plus one field, `sealed`, holding
 * the personal fields' JSON encrypted. Reading puts the fields back where
 * they were, so the catalog sees the event it wrote; an event stored before
 * (no `sealed`) reads as it always did.
 */

/** Which fields of an event type are personal, and which data field names their subject (the key they are sealed under). */
export interface PersonalDeclaration {
  type: string;
  subject: string;
  fields: readonly string[];
  /** The schema's fields in order, which is the order the catalog writes them in: an opened event has them so again. */
  order: readonly string[];
}

/** The field of stored data (and of read-model documents) that holds the sealed personal fields. */
export const SEALED = 'sealed';

/** One line per event type: `personal(ResponseSubmitted, 'response_id', ['answers', 'metadata'])`. */
export function personal(definition: EventDefinition, subject: string, fields: readonly string[]): PersonalDeclaration {
  const shape = definition.schema.shape as Record<string, unknown>;
  for (const field of [subject, ...fields]) if (!(field in shape)) throw new Error(`${definition.type} has no field ${field}`);
  if (SEALED in shape) throw new Error(`${definition.type} has a field named ${SEALED}, which the sealed envelope takes`);
  if (fields.includes(subject)) throw new Error(`${definition.type}: its subject ${subject} must stay readable`);
  return { type: definition.type, subject, fields, order: Object.keys(shape) };
}

/**
 * What `sealed` holds: the subject, the nonce, and the personal fields' JSON
 * encrypted with the tag after it (base64). An event stored plain and
 * encrypted later (`admin encrypt-existing`) holds its whole data text as it
 * was stored in the box, and `digest`, the SHA-256 of that text: the seals
 * hashed the text, and keep verifying it through the digest.
 */
export interface Sealed {
  key: string;
  iv: string;
  box: string;
  digest?: string;
}

const isSealed = (value: unknown): value is Sealed =>
  typeof value === 'object' && value !== null && typeof (value as Sealed).key === 'string' && typeof (value as Sealed).iv === 'string' && typeof (value as Sealed).box === 'string';

/** The sealed envelope of stored data, or of a read-model document, if it holds one. */
export const sealedOf = (data: unknown): Sealed | undefined => {
  const sealed = (data as Record<string, unknown> | null)?.[SEALED];
  return isSealed(sealed) ? sealed : undefined;
};

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

function encrypt(key: Buffer, plain: Buffer, aad: string, iv: Buffer): { iv: Buffer; box: Buffer } {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const box = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { iv, box };
}

/**
 * A box that does not open under its subject's key: the key was derived
 * under another SECRET than the one the content was sealed under (the
 * likeliest cause: SECRET changed), or the stored text was altered.
 */
export class SealedUnreadable extends Error {
  constructor(readonly subject: string) {
    super(`the personal content sealed under ${subject} does not open: SECRET is not the one it was sealed under, or the stored text was altered`);
  }
}

/** The plain text of a box (its tag after it), as a string: the one form every reader parses. */
function decrypt(key: Buffer, iv: Buffer, box: Buffer, aad: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(box.subarray(box.length - TAG_BYTES));
  try {
    return decipher.update(box.subarray(0, box.length - TAG_BYTES), undefined, 'utf8') + decipher.final('utf8');
  } catch {
    // OpenSSL says only "unable to authenticate data".
    throw new SealedUnreadable(aad);
  }
}

/** The key every subject key is derived under: HKDF-SHA-256 of SECRET, for this use only, derived once per codec. */
export const rootKey = (secret: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'feedback-service', 'subject-keys', KEY_BYTES));

/** The subject the key store keeps its check of SECRET under: no response or vote id looks like it. */
export const SECRET_CHECK = 'secret-check';

/** What the key store keeps to recognise SECRET: derived from it for this use only, so it tells nothing of SECRET or of any key. */
const secretCheckOf = (secret: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'feedback-service', SECRET_CHECK, KEY_BYTES));

/**
 * SECRET is not the one the key store's keys were made under: every
 * response and vote would read as unreadable, and new ones would be sealed
 * under keys no other instance opens. Refused where the stores are opened.
 */
export class WrongSecret extends Error {
  constructor() {
    super('SECRET is not the one this store\'s keys were made under (the key store keeps a check of it): no response or vote could be read. Start with the SECRET the store was made with');
  }
}

/** A subject's salt: what the key store keeps for it. */
const SALT_BYTES = 32;

/** Keys derived, kept per process; bounded, as a rebuild meets a million subjects once each. */
const DERIVED_KEPT = 10_000;
/** At most this many texts sealed lately are kept, of this many characters in all, each for about this long (see PersonalCodec.lately). */
const LATELY_KEPT = 4_096;
const LATELY_CHARACTERS = 16 * 1024 * 1024;
const LATELY_MS = 2_000;

/**
 * How long a key looked up is used without looking it up again: a list of
 * 100 asked for again does not read 100 salts again. An erasure made in this
 * process drops its keys at once; one made by another process sharing the
 * key store is seen here within this time (it deletes the events' streams
 * too, so nothing is left to open with them).
 */
export const KEY_FRESH_MS = 10_000;

/** The SHA-256 of stored data text, as the seals hash it (seals/chain.ts payloadDigest). */
const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A stored event rewritten with its personal fields sealed: where it is, and its data text before and after. */
export interface Resealed {
  position: bigint;
  before: string;
  data: string;
}

/** Bytes drawn from the CSPRNG at a time for nonces. */
const DRAWN_AT_ONCE = 4096;

/**
 * Random bytes from a pool drawn DRAWN_AT_ONCE at a time: a draw from the
 * CSPRNG costs far more than its bytes (a nonce drawn alone was 3.5 % of a
 * submission's CPU). Each slice is handed out once, and a new pool is drawn
 * rather than the old one refilled, so no slice handed out ever changes.
 * For nonces only, which are stored in the clear: a salt kept as a slice
 * would keep its neighbours' salts in memory with it, erased ones among them.
 */
function nonceSource(): (size: number) => Buffer {
  let pool = Buffer.alloc(0);
  let next = 0;
  return (size) => {
    if (size > DRAWN_AT_ONCE / 4) return randomBytes(size);
    if (next + size > pool.length) {
      pool = randomBytes(DRAWN_AT_ONCE);
      next = 0;
    }
    next += size;
    return pool.subarray(next - size, next);
  };
}

export class PersonalCodec {
  private readonly byType: Map<string, PersonalDeclaration>;
  /** Every declared personal field: what a read-model document gets back from a box holding a whole event. */
  private readonly personalFields: Set<string>;
  private readonly root: Buffer;
  private readonly add: SubjectKeyStore['add'];
  /** Derived keys by subject, with the salt they came from: a salt found again in the store is not derived twice. */
  private readonly derived = new Map<string, { salt: Buffer; key: Buffer; at: number }>();
  private readonly now: () => number;
  private readonly freshMs: number;
  /**
   * Subjects made ahead (`reserve`) whose salts are stored already, with
   * their keys and when they were reserved, in that order: the first event
   * sealed under one takes its key from here and writes nothing.
   */
  private readonly reserved = new Map<string, { salt: Buffer; key: Buffer; at: number }>();
  /** Subjects whose reservation is being written: what is sealed under one waits for it. */
  private readonly reserving = new Map<string, Promise<void>>();
  /** Reserved keys being deleted (`release`): an add waits for it, so that it cannot meet a salt as it is deleted. */
  private releasing: Promise<void> = Promise.resolve();
  private readonly nonces = nonceSource();
  /**
   * The personal fields' text of the events sealed here lately, by nonce,
   * with the box it made: each submission is read back at once by several
   * readers (the projections, the erasure process, the webhooks), which
   * take the text from here rather than decrypt the box again. Used only
   * where the event's key is there (an erased key reads as erased, as ever)
   * and the box is the one sealed; dropped with an erased subject's key,
   * and after a moment in any case (an erasure made by another process
   * does not pass here), so what a visitor sent is not held longer than
   * its readers need it.
   */
  private readonly lately = new Map<string, { subject: string; box: string; text: string; at: number }>();
  private latelySweep: NodeJS.Timeout | undefined;
  private latelyCharacters = 0;
  private readonly secretCheck: Buffer;
  /** A store sealed before it kept a check of SECRET: the check is kept once a sealed event opens under this one. */
  private checkPending = false;

  constructor(
    declarations: readonly PersonalDeclaration[],
    readonly keys: SubjectKeyStore,
    secret: string,
    options: {
      /** Milliseconds on a monotonic clock, for how long a key looked up stays fresh. */
      now?: () => number;
      /**
       * How long a key looked up is used again (KEY_FRESH_MS); 0 where the
       * read models are a copy that an erasure does not reach (a point-in-time
       * store), which must look every key up as it opens.
       */
      freshMs?: number;
    } = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.freshMs = options.freshMs ?? KEY_FRESH_MS;
    this.byType = new Map(declarations.map((d) => [d.type, d]));
    this.personalFields = new Set(declarations.flatMap((d) => d.fields));
    this.root = rootKey(secret);
    this.secretCheck = secretCheckOf(secret);
    this.add = groupedAdds(keys);
  }

  /**
   * Refuses (WrongSecret) a SECRET other than the one the key store's keys
   * were made under. A store without a check gets one: at once when it
   * keeps no key yet, otherwise when the first sealed event opens under
   * this SECRET (a store sealed before checks were kept must not learn a
   * wrong one). A read-only store is only compared with.
   */
  async checkSecret(options: { readonly?: boolean } = {}): Promise<void> {
    const kept = (await this.keys.find([SECRET_CHECK])).get(SECRET_CHECK);
    if (kept) {
      if (!this.isSecretCheck(kept)) throw new WrongSecret();
      return;
    }
    if (options.readonly) return;
    if (await this.keys.holdsOther(SECRET_CHECK)) {
      this.checkPending = true;
      return;
    }
    // Another instance starting at the same moment under another SECRET: the first write wins, and the other is refused.
    const stored = (await this.keys.add(new Map([[SECRET_CHECK, this.secretCheck]]))).get(SECRET_CHECK);
    if (!stored || !this.isSecretCheck(stored)) throw new WrongSecret();
  }

  private isSecretCheck(kept: Buffer): boolean {
    return kept.length === this.secretCheck.length && timingSafeEqual(kept, this.secretCheck);
  }

  /** After a sealed event opened: a store that keeps no check of SECRET keeps this one's (see checkSecret). */
  private opened(): void {
    if (!this.checkPending) return;
    this.checkPending = false;
    // Not awaited: a failed write leaves the store as it was, and the next start tries again.
    this.keys.add(new Map([[SECRET_CHECK, this.secretCheck]])).catch(() => undefined);
  }

  /** Whether events of this type carry personal fields. */
  declares(type: string): boolean {
    return this.byType.has(type);
  }

  /** The events as they are to be stored: each declared one's personal fields sealed under its subject's key (made on first use). */
  async seal(events: NewEvent[]): Promise<NewEvent[]> {
    const subjects = new Set<string>();
    for (const event of events) {
      const declaration = this.byType.get(event.type);
      if (declaration && !sealedOf(event.data)) subjects.add(String(event.data[declaration.subject]));
    }
    if (subjects.size === 0) return events;
    const keys = await this.keysFor([...subjects], true);
    const ivs = this.nonces(IV_BYTES * events.length);
    let at = 0;
    return events.map((event) => {
      const declaration = this.byType.get(event.type);
      if (!declaration || sealedOf(event.data)) return event;
      return { ...event, data: this.sealData(event.data, declaration, keys.get(String(event.data[declaration.subject]))!, ivs.subarray(IV_BYTES * at, IV_BYTES * ++at)) };
    });
  }

  /**
   * The events as their readers know them: sealed ones opened, others as
   * they are. An event whose key is gone is `undefined`: erased, as if its
   * stream were deleted. The stored envelope is kept on the opened event
   * (`sealed`) for read models that keep it rather than the content.
   */
  async open(events: StoredEvent[]): Promise<Array<StoredEvent | undefined>> {
    const subjects = new Set<string>();
    for (const event of events) {
      const sealed = this.byType.has(event.type) ? sealedOf(event.data) : undefined;
      if (sealed) subjects.add(sealed.key);
    }
    if (subjects.size === 0) return events;
    const keys = await this.keysFor([...subjects], false);
    const opened = events.map((event) => {
      const sealed = this.byType.has(event.type) ? sealedOf(event.data) : undefined;
      if (!sealed) return event;
      const key = keys.get(sealed.key);
      if (!key) return undefined;
      const { dataText: _text, ...rest } = event;
      if (sealed.digest !== undefined) {
        // Stored plain first, encrypted later: the box holds the data text as it was.
        const text = this.openText(sealed, key);
        return { ...rest, data: JSON.parse(text) as JsonObject, dataText: text, sealed };
      }
      return { ...rest, data: this.openData(event.data, sealed, key, this.byType.get(event.type)!.order), sealed };
    });
    if (keys.size > 0) this.opened();
    return opened;
  }

  /**
   * Read-model documents as they are served: those that keep a sealed
   * envelope get its fields back, those whose key is gone are left out.
   */
  async reveal<D extends Record<string, unknown>>(docs: D[]): Promise<D[]> {
    const subjects = docs.flatMap((doc) => sealedOf(doc)?.key ?? []);
    if (subjects.length === 0) return docs;
    const keys = await this.keysFor([...new Set(subjects)], false);
    const shown: D[] = [];
    for (const doc of docs) {
      const sealed = sealedOf(doc);
      if (!sealed) shown.push(doc);
      else {
        const key = keys.get(sealed.key);
        if (key) shown.push(this.openData(doc, sealed, key) as D);
      }
    }
    return shown;
  }

  /**
   * Stored records of declared types still plain, sealed as they stand: the
   * data text each is to be stored as, its other fields plain and in their
   * order, `sealed` holding the whole text as it was and its digest. Records
   * already sealed, or of other types, are left out. Their subjects' keys are
   * made (durably) before this answers, as for an append.
   */
  async reseal(records: readonly FeedRecord[]): Promise<Resealed[]> {
    const plain: Array<{ record: FeedRecord; data: JsonObject; declaration: PersonalDeclaration }> = [];
    for (const record of records) {
      const declaration = this.byType.get(record.type);
      if (!declaration) continue;
      const data = JSON.parse(record.data) as JsonObject;
      if (!sealedOf(data)) plain.push({ record, data, declaration });
    }
    if (plain.length === 0) return [];
    const keys = await this.keysFor([...new Set(plain.map(({ data, declaration }) => String(data[declaration.subject])))], true);
    const ivs = this.nonces(IV_BYTES * plain.length);
    return plain.map(({ record, data, declaration }, at) => {
      const subject = String(data[declaration.subject]);
      const { iv, box } = encrypt(keys.get(subject)!, Buffer.from(record.data), subject, ivs.subarray(IV_BYTES * at, IV_BYTES * (at + 1)));
      const stored: JsonObject = {};
      for (const field of Object.keys(data)) {
        if (!declaration.fields.includes(field)) stored[field] = data[field];
        else if (!(SEALED in stored)) stored[SEALED] = null;
      }
      stored[SEALED] = { key: subject, iv: iv.toString('base64'), box: box.toString('base64'), digest: digestOf(record.data) } satisfies Sealed;
      return { position: record.position, before: record.data, data: JSON.stringify(stored) };
    });
  }

  /**
   * The records encrypted in place whose envelope does not hold what it
   * claims: the seals hash them by the digest the envelope names, so that
   * digest is checked against the text the box opens to, and the fields
   * kept plain against the same fields in it. A record whose key is gone
   * (erased, its stream not deleted yet) cannot be checked and is not named.
   */
  async encryptedLaterBreaks(records: readonly FeedRecord[]): Promise<Array<{ record: FeedRecord; problem: string }>> {
    const claimed: Array<{ record: FeedRecord; stored: JsonObject; sealed: Sealed }> = [];
    for (const record of records) {
      if (!this.byType.has(record.type) || !record.data.includes('"digest":"')) continue;
      const stored = JSON.parse(record.data) as JsonObject;
      const sealed = sealedOf(stored);
      if (sealed?.digest !== undefined) claimed.push({ record, stored, sealed });
    }
    if (claimed.length === 0) return [];
    const keys = await this.keysFor([...new Set(claimed.map(({ sealed }) => sealed.key))], false);
    const breaks: Array<{ record: FeedRecord; problem: string }> = [];
    for (const { record, stored, sealed } of claimed) {
      const key = keys.get(sealed.key);
      if (!key) continue;
      let text: string;
      try {
        text = this.openText(sealed, key);
      } catch {
        breaks.push({ record, problem: 'its encrypted text does not open under its key: it changed since it was encrypted' });
        continue;
      }
      const whole = JSON.parse(text) as JsonObject;
      if (digestOf(text) !== sealed.digest) breaks.push({ record, problem: 'its encrypted text is not the text its digest names' });
      else if (Object.keys(stored).some((field) => field !== SEALED && JSON.stringify(stored[field]) !== JSON.stringify(whole[field]))) {
        breaks.push({ record, problem: 'a field it keeps plain differs from the same field in its encrypted text' });
      }
    }
    return breaks;
  }

  /**
   * Stores salts for subjects no event names yet, in one write, so that
   * the first event sealed under each needs no write of its own (see
   * ReservedSubjects). Answers once they are durable; an event sealed
   * under one of them before then waits for it.
   */
  reserve(subjects: readonly string[]): Promise<void> {
    const written = (async () => {
      const drawn = randomBytes(SALT_BYTES * subjects.length);
      const salts = await this.add(new Map(subjects.map((subject, i) => [subject, drawn.subarray(SALT_BYTES * i, SALT_BYTES * (i + 1))])));
      const at = this.now();
      for (const subject of subjects) {
        const salt = salts.get(subject);
        if (salt) this.reserved.set(subject, { salt, key: this.keyOf(subject, salt), at });
      }
    })();
    // Failed, they are subjects like any other: their keys are made as they are sealed.
    const settled = written.then(
      () => undefined,
      () => undefined,
    );
    for (const subject of subjects) this.reserving.set(subject, settled);
    void settled.then(() => {
      for (const subject of subjects) if (this.reserving.get(subject) === settled) this.reserving.delete(subject);
    });
    return written;
  }

  /**
   * Deletes the salts of the reserved subjects nothing was sealed under,
   * of those reserved before `before` (all without it): ids made ahead
   * that were never handed out, or whose submission was refused. Nothing
   * can be sealed under them any more; a subject released and then used
   * all the same gets a new key as it is sealed, as one never reserved.
   */
  async release(before = Number.POSITIVE_INFINITY): Promise<void> {
    const unused: string[] = [];
    for (const [subject, { at }] of this.reserved) {
      if (at >= before) break;
      unused.push(subject);
    }
    if (unused.length === 0) return;
    for (const subject of unused) this.reserved.delete(subject);
    const erased = this.releasing.then(() => this.keys.erase(unused));
    this.releasing = erased.catch(() => undefined);
    await erased;
  }

  /** When the oldest subject still reserved was reserved, if any is. */
  oldestReserved(): number | undefined {
    for (const { at } of this.reserved.values()) return at;
    return undefined;
  }

  /** Deletes the subjects' keys: everything sealed under them is unreadable from now on, wherever it is copied. */
  async forget(subjects: readonly string[]): Promise<void> {
    if (subjects.length === 0) return;
    for (const subject of subjects) {
      this.derived.delete(subject);
      this.reserved.delete(subject);
    }
    const forgotten = new Set(subjects);
    for (const [iv, { subject, text }] of this.lately) {
      if (!forgotten.has(subject)) continue;
      this.lately.delete(iv);
      this.latelyCharacters -= text.length;
    }
    await this.keys.erase(subjects);
    // Again: a lookup under way as the keys were erased may have kept one.
    for (const subject of subjects) this.derived.delete(subject);
  }

  /** The stored data of an event: its other fields in their order, `sealed` where the first personal field was. */
  private sealData(data: JsonObject, declaration: PersonalDeclaration, key: Buffer, nonce: Buffer): JsonObject {
    const subject = String(data[declaration.subject]);
    const personal: JsonObject = {};
    const stored: JsonObject = {};
    for (const field of Object.keys(data)) {
      if (declaration.fields.includes(field)) {
        if (!(SEALED in stored)) stored[SEALED] = null;
        personal[field] = data[field];
      } else stored[field] = data[field];
    }
    const text = JSON.stringify(personal);
    const { iv, box } = encrypt(key, Buffer.from(text), subject, nonce);
    const sealed = { key: subject, iv: iv.toString('base64'), box: box.toString('base64') } satisfies Sealed;
    // Emptied when full rather than trimmed one by one, as `derived` is; a text too large for it is not kept.
    if (text.length <= LATELY_CHARACTERS / 64) {
      if (this.lately.size >= LATELY_KEPT || this.latelyCharacters + text.length > LATELY_CHARACTERS) this.forgetLately();
      this.lately.set(sealed.iv, { subject, box: sealed.box, text, at: this.now() });
      this.latelyCharacters += text.length;
      this.latelySweep ??= setTimeout(() => this.sweepLately(), LATELY_MS).unref();
    }
    stored[SEALED] = sealed;
    return stored;
  }

  private forgetLately(): void {
    this.lately.clear();
    this.latelyCharacters = 0;
  }

  /** Drops the texts sealed more than LATELY_MS ago (the oldest come first), and comes back while any is left. */
  private sweepLately(): void {
    this.latelySweep = undefined;
    const before = this.now() - LATELY_MS;
    for (const [iv, { at, text }] of this.lately) {
      if (at > before) break;
      this.lately.delete(iv);
      this.latelyCharacters -= text.length;
    }
    if (this.lately.size > 0) this.latelySweep = setTimeout(() => this.sweepLately(), LATELY_MS).unref();
  }

  private openText(sealed: Sealed, key: Buffer): string {
    return decrypt(key, Buffer.from(sealed.iv, 'base64'), Buffer.from(sealed.box, 'base64'), sealed.key);
  }

  /** The data with the sealed fields put back: in the schema's order where given, else where `sealed` stands. */
  private openData(data: JsonObject, sealed: Sealed, key: Buffer, order?: readonly string[]): JsonObject {
    const late = sealed.digest === undefined ? this.lately.get(sealed.iv) : undefined;
    const text = late && late.box === sealed.box && late.subject === sealed.key ? late.text : this.openText(sealed, key);
    let personal = JSON.parse(text) as JsonObject;
    if (sealed.digest !== undefined) {
      // A whole event's data: only its personal fields go back into a document.
      const whole = personal;
      personal = {};
      for (const field of Object.keys(whole)) if (this.personalFields.has(field)) personal[field] = whole[field];
    }
    const opened: JsonObject = {};
    if (order) {
      for (const field of order) {
        const value = Object.hasOwn(personal, field) ? personal[field] : data[field];
        if (value !== undefined) opened[field] = value;
      }
      // Fields the schema does not name (an older version's) follow, as stored.
      for (const field of Object.keys(data)) if (field !== SEALED && !(field in opened)) opened[field] = data[field];
      for (const field of Object.keys(personal)) if (!(field in opened)) opened[field] = personal[field];
      return opened;
    }
    for (const field of Object.keys(data)) {
      if (field === SEALED) Object.assign(opened, personal);
      else opened[field] = data[field];
    }
    return opened;
  }

  /**
   * The subjects' keys; with `create`, made for those that have none. The
   * salts of subjects not looked up in the last `freshMs` are looked up
   * in the store (one query for the lot), so a key erased by another
   * process is gone here too within that time; a salt seen before is not
   * derived again.
   */
  private async keysFor(subjects: string[], create: boolean): Promise<Map<string, Buffer>> {
    if (create && this.reserving.size > 0) {
      const writing = new Set(subjects.flatMap((subject) => this.reserving.get(subject) ?? []));
      if (writing.size > 0) await Promise.all(writing);
    }
    const now = this.now();
    const keys = new Map<string, Buffer>();
    const stale: string[] = [];
    for (const subject of subjects) {
      const reserved = create ? this.reserved.get(subject) : undefined;
      if (reserved) {
        // Its salt is durable since it was reserved: taken once, then known as any other.
        this.reserved.delete(subject);
        if (this.derived.size >= DERIVED_KEPT) this.derived.clear();
        this.derived.set(subject, { salt: reserved.salt, key: reserved.key, at: now });
        keys.set(subject, reserved.key);
        continue;
      }
      const known = this.derived.get(subject);
      if (known && now - known.at < this.freshMs) keys.set(subject, known.key);
      else stale.push(subject);
    }
    if (stale.length === 0) return keys;
    let salts: Map<string, Buffer>;
    if (create) {
      // A subject is new when its first event is sealed: its salt is stored (durably) before that event is appended.
      await this.releasing;
      const drawn = randomBytes(SALT_BYTES * stale.length);
      salts = await this.add(new Map(stale.map((subject, i) => [subject, drawn.subarray(SALT_BYTES * i, SALT_BYTES * (i + 1))])));
    } else salts = await this.keys.find(stale);
    for (const subject of stale) {
      const salt = salts.get(subject);
      if (salt) keys.set(subject, this.derive(subject, salt, now));
      // Erased by another process: not kept here either.
      else this.derived.delete(subject);
    }
    return keys;
  }

  /** HMAC-SHA-256 under the root key of the subject and its salt (the salt is of fixed length, last, so no two inputs read alike). */
  private keyOf(subject: string, salt: Buffer): Buffer {
    return createHmac('sha256', this.root).update(subject).update(salt).digest();
  }

  /** The subject's key from its salt, kept for later lookups. */
  private derive(subject: string, salt: Buffer, at: number): Buffer {
    const known = this.derived.get(subject);
    if (known && known.salt.equals(salt)) {
      known.at = at;
      return known.key;
    }
    const key = this.keyOf(subject, salt);
    // Emptied when full rather than trimmed one by one: a Map's oldest entry is slow to find once many are deleted.
    if (this.derived.size >= DERIVED_KEPT) this.derived.clear();
    this.derived.set(subject, { salt, key, at });
    return key;
  }
}
