import type { IncomingMessage } from 'node:http';
import { MAX_APPEND_BYTES } from '../infra/event-store/port.js';

/**
 * The largest request body taken. It stays under the most KurrentDB takes in
 * one append (its MaxAppendSize, 1 MiB unless configured otherwise: see
 * MAX_APPEND_BYTES), so that a body accepted here is never refused by the
 * store: what the service stores from a request is at most the body plus what
 * it adds itself, which is bounded: copies of request headers (at most 16 KiB
 * in all, Node's header limit; the user agent is kept twice and pieces of it
 * and of the referrer once more, each escaped as JSON at worst to twice its
 * length), a form's consent text (at most 5000 characters), ids and event
 * metadata. 256 KiB holds all of that with room to spare.
 */
export const BODY_LIMIT = MAX_APPEND_BYTES - 256 * 1024;

export const BODY_TOO_LARGE = `The request body is larger than ${BODY_LIMIT / 1024} KiB`;

/**
 * How much of a refused body is read (and dropped) before the 413 goes out.
 * A client that writes its whole body before it reads the answer (most do)
 * would otherwise meet a connection closed under it (EPIPE, ECONNRESET) and
 * never see the 413; past this much, the connection is closed after the
 * answer all the same, so a refused upload cannot cost more than this.
 */
export const REFUSED_BODY_READ = 8 * 1024 * 1024;

/** Reads and drops what is left of a request's body, up to `limit` bytes; done at its end, its error, or the limit. */
export function discardBody(raw: IncomingMessage, limit = REFUSED_BODY_READ): Promise<void> {
  if (raw.complete || raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = (): void => {
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('error', done);
      raw.off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      read += chunk.length;
      if (read > limit) done();
    };
    raw.on('data', onData);
    raw.on('end', done);
    raw.on('error', done);
    raw.on('close', done);
    raw.resume();
  });
}
