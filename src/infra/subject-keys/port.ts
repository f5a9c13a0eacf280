/**
 * The subject-key port: one key per response and per vote (its subject),
 * kept apart from the events it opens, so that deleting the key makes every
 * copy of those events unreadable (crypto-shredding). What is kept is the
 * subject's random salt, from which the key is derived under a key derived
 * from SECRET (kernel/personal.ts): a store, or a copy of it, holds no
 * usable key by itself. Two adapters: a file of its own beside the embedded store, and a
 * MongoDB collection of its own.
 */
export interface SubjectKeyStore {
  readonly kind: 'sqlite' | 'mongodb';
  /** The salts of those subjects that have one (an erased subject has none). */
  find(subjects: readonly string[]): Promise<Map<string, Buffer>>;
  /**
   * Keeps each salt whose subject has none yet, and answers the salt each
   * subject holds afterwards: the one given, or the one another writer
   * stored first (the first write wins, so a subject never has two keys). One call is one write: on the embedded store, one durable commit.
   */
  add(keys: ReadonlyMap<string, Buffer>): Promise<Map<string, Buffer>>;
  /** Whether it keeps the key of any subject other than this one. */
  holdsOther(subject: string): Promise<boolean>;
  /** Deletes the subjects' keys for good; a subject without one is left as it is. */
  erase(subjects: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** The embedded key store's file, beside the event store's (infra/sqlite.ts DATABASE_FILE). */
export const KEYS_FILE = 'keys.db';
