import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorCode } from '../kernel/errors.js';
import { errorBody } from './error-body.js';
import { EVERY_REPLY } from './reply-headers.js';

const REFUSALS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'request_header_fields_too_large', message: 'The request line or headers are larger than the server takes' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', message: 'The request was not received in time' },
};
const MALFORMED = { code: 'validation_error' as const, message: 'The request is not valid HTTP' };

/**
 * What Node's parser refuses before fastify sees a request (a URL or headers
 * over the limit, a malformed request line), answered in the D3 shape like
 * everything else, with the headers every reply carries (its own request id
 * among them), and logged with its code and that id.
 */
export function clientErrorHandler(logger: FastifyBaseLogger, requestId: () => string) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // Reset by the client: there is nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { code, message } = (error.code ? REFUSALS[error.code] : undefined) ?? MALFORMED;
    const id = requestId();
    logger.info({ reqId: id, res: { statusCode: errorBody(code, message).statusCode }, code, parser: error.code }, 'request refused by the HTTP parser');
    // A request before the bad bytes on this connection arrived whole and is
    // still being answered (Node's own field for it): its reply goes first, so a
    // client is not told only of the refusal while what it sent before was
    // stored. One still arriving (a request timed out) is what is refused.
    const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (answering && !answering.writableEnded && answering.req?.complete) {
      // 'close' comes once the reply is out, or once the connection is gone (answerAndClose then only destroys it).
      answering.once('close', () => answerAndClose(socket, id, code, message));
      return;
    }
    answerAndClose(socket, id, code, message);
  };
}

/**
 * CONNECT, which Node hands to a `connect` listener rather than as a request
 * (and, with none, closes the connection without a word): no route takes
 * it, so it is answered 404 as any other method no route takes.
 */
export function connectHandler(logger: FastifyBaseLogger, requestId: () => string) {
  return (request: IncomingMessage, socket: Socket): void => {
    const id = requestId();
    const path = (request.url ?? '').split('?')[0];
    logger.info({ reqId: id, req: { method: 'CONNECT' }, res: { statusCode: 404 }, code: 'not_found' }, 'CONNECT refused');
    answerAndClose(socket, id, 'not_found', `No route CONNECT ${path}`);
  };
}

/** An error reply in the D3 shape, written on the socket itself, which is then closed. */
function answerAndClose(socket: Socket, id: string, code: ErrorCode, message: string): void {
  if (!socket.writable) return void socket.destroy();
  const reply = errorBody(code, message);
  const body = JSON.stringify(reply);
  const status = reply.statusCode;
  const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), 'X-Request-Id': id, ...EVERY_REPLY, 'Cross-Origin-Resource-Policy': 'same-origin', Connection: 'close' };
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`,
    () => socket.destroy(),
  );
}
