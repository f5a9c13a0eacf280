import { MongoClient, MongoServerError, type Collection } from 'mongodb';
import { mongoClientOptions } from '../read-models/mongo.js';
import type { SubjectKeyStore } from './port.js';

/** The collection of the subject keys: its own, so that no read model's backup or rebuild touches it. */
export const SUBJECT_KEYS = 'subject_keys';

interface KeyDocument {
  _id: string;
  salt: Buffer;
}

/** Duplicate key: another writer stored the subject's key first. */
const DUPLICATE_KEY = 11000;

/**
 * The subject keys in a MongoDB collection of their own, `{ _id: subject,
 * salt: BinData }`, written with majority write concern: an erased key
 * is gone from every member that acknowledged the delete. `add` inserts
 * unordered and ignores duplicate-key errors (the first writer wins, as on
 * SQLite), then reads every subject back.
 */
export async function openMongoSubjectKeys(url: string, timeoutMs?: number): Promise<SubjectKeyStore> {
  // Bounded as the read models' client is: a key lookup on a request path never hangs.
  const client = new MongoClient(url, mongoClientOptions(url, timeoutMs));
  await client.connect();
  // The database the URL names, as the read models use it (theirs when it names none).
  const named = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(url)?.[1] ?? '';
  const keys: Collection<KeyDocument> = client.db(named === '' ? 'feedback' : decodeURIComponent(named)).collection<KeyDocument>(SUBJECT_KEYS, { writeConcern: { w: 'majority' }, readConcern: { level: 'majority' } });
  const find = async (subjects: readonly string[]): Promise<Map<string, Buffer>> => {
    const found = new Map<string, Buffer>();
    if (subjects.length === 0) return found;
    for (const doc of await keys.find({ _id: { $in: [...subjects] } }).toArray()) {
      // The driver hands binary data back as its Binary type.
      const salt = doc.salt as unknown as { buffer?: Uint8Array } | Buffer;
      found.set(doc._id, Buffer.isBuffer(salt) ? salt : Buffer.from(salt.buffer!));
    }
    return found;
  };
  return {
    kind: 'mongodb',
    find,
    async holdsOther(subject) {
      return (await keys.findOne({ _id: { $ne: subject } }, { projection: { _id: 1 } })) !== null;
    },
    async add(given) {
      if (given.size === 0) return new Map();
      try {
        await keys.insertMany(
          [...given].map(([_id, salt]) => ({ _id, salt })),
          { ordered: false },
        );
      } catch (error) {
        const writeErrors = (error as { writeErrors?: Array<{ code?: number }> | { code?: number } }).writeErrors;
        const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
        const onlyDuplicates = list.length > 0 && list.every((e) => e.code === DUPLICATE_KEY);
        if (!onlyDuplicates && !(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
      }
      return find([...given.keys()]);
    },
    async erase(subjects) {
      if (subjects.length > 0) await keys.deleteMany({ _id: { $in: [...subjects] } });
    },
    async close() {
      await client.close();
    },
  };
}
