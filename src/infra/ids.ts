import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Makes a new id with a readable prefix, e.g. `acc_01JD…`. */
export type IdGenerator = (prefix: string) => string;

/**
 * ULIDs sort by creation time, and the monotonic factory keeps that order
 * within one millisecond, which gives lists a stable newest-first tie-break.
 */
export function createIdGenerator(): IdGenerator {
  const ulid = monotonicFactory();
  return (prefix) => `${prefix}_${ulid()}`;
}

export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

export type RandomBytes = (size: number) => Buffer;
export const secureRandom: RandomBytes = (size) => randomBytes(size);
