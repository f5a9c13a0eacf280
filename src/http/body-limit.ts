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
