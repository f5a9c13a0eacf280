import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { BODY_LIMIT } from '../../src/http/body-limit.js';
import { ALL_SCOPES, owner, testApp } from '../support/app.js';

/** Posts `size` bytes over a fresh connection, as a client that writes its whole body before it reads; answers the status or the socket's error. */
function post(port: number, size: number, chunked: boolean): Promise<{ status?: number; code?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/widgets/wgt_x/submit',
      agent: false,
      headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(size) }) },
    });
    // A write that fails (EPIPE, ECONNRESET) fails the request for most clients, even with the answer already in.
    let failed: string | undefined;
    let answer: { status?: number; code?: string } | undefined;
    req.on('response', (reply: IncomingMessage) => {
      let body = '';
      reply.setEncoding('utf8');
      reply.on('data', (chunk: string) => (body += chunk));
      reply.on('end', () => (answer = { status: reply.statusCode, code: (JSON.parse(body) as { code?: string }).code }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => (failed ??= error.code ?? error.message));
    req.on('close', () => resolve(failed !== undefined ? { error: failed } : (answer ?? { error: 'no answer' })));
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    const write = (): void => {
      while (sent < size) {
        const piece = chunk.subarray(0, Math.min(chunk.length, size - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

t.test('a body over the limit is answered 413 over a real socket, every time, not a closed connection', async (t) => {
  const { app } = await testApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const tries = 20;
  for (const [name, size, chunked] of [
    ['just over, announced by Content-Length', BODY_LIMIT + 1, false],
    ['twice the limit, announced by Content-Length', 2 * BODY_LIMIT, false],
    ['twice the limit, chunked', 2 * BODY_LIMIT, true],
    ['4 MiB', 4 * 1024 * 1024, false],
  ] as const) {
    const answers: Record<string, number> = {};
    for (let i = 0; i < tries; i++) {
      const answer = await post(port, size, chunked);
      const key = answer.error ?? `${answer.status} ${answer.code}`;
      answers[key] = (answers[key] ?? 0) + 1;
    }
    t.same(answers, { '413 payload_too_large': tries }, name);
  }
});

t.test('a route that takes no body takes an empty one labelled JSON; a route that takes one still refuses it', async (t) => {
  const { app, services } = await testApp(t, { webhooks: { resolve: async () => [{ address: '93.184.215.14', family: 4 }], send: async () => ({ status: 200 }) } });
  const biz = await owner(services, 'business', [...ALL_SCOPES, 'webhooks:read', 'webhooks:write']);
  const created = await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url: 'https://hooks.example.com/x', events: ['response.created'] } });
  const { id } = created.json() as { id: string };
  const json = { ...biz.headers, 'content-type': 'application/json' };

  const rotated = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/rotate-secret`, headers: json, payload: '' });
  t.equal(rotated.statusCode, 200, rotated.body);
  const missing = await app.inject({ method: 'POST', url: '/api/webhooks/whk_nothing/rotate-secret', headers: json, payload: '' });
  t.equal(missing.statusCode, 404, `unknown: the 404, not a 400 for the body: ${missing.body}`);
  const withBody = await app.inject({ method: 'POST', url: '/api/widgets', headers: json, payload: '' });
  t.equal(withBody.statusCode, 400, 'a route with a body schema still needs its body');
  t.equal(withBody.json().code, 'validation_error');
});
