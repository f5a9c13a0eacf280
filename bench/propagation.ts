import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { openSqliteEventStore } from '../src/infra/event-store/sqlite.js';

const ROOT = new URL('../', import.meta.url).pathname;

export interface Propagation {
  /** Milliseconds from the CLI's answer to the first request the server answers with the new key. */
  created: number[];
  /** Milliseconds from the CLI's answer to the first request the server refuses with the revoked key. */
  revoked: number[];
  /** Milliseconds from the CLI's answer until a live subscription in this process had its event (0: before it answered). */
  feed: number[];
}

function admin(args: string[], env: Record<string, string>): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'src/cli/admin.ts'), ...args], { env: { ...process.env, NODE_OPTIONS: '--import=tsx', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`admin ${args[0]} exited ${code}`))));
  });
}

/** Polls until the key gets the status, every 5 ms; answers how long that took. */
async function until(base: string, key: string, status: number, address: () => string): Promise<number> {
  const started = performance.now();
  for (;;) {
    const reply = await fetch(`${base}/api/widgets`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': address() } });
    if (reply.status === status) return performance.now() - started;
    if (performance.now() - started > 30_000) throw new Error(`the server never answered ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * D1: the server honours a key the admin CLI made or revoked within 2 s. The
 * CLI is another process on the same store, and applies its events to the
 * shared read models before it answers, which is what the server reads keys
 * from; a live subscription to the feed, as the server's projections follow
 * it, finds another process's events by polling. Needs a server run with
 * TRUST_PROXY, so the polls, refused ones too, come from many addresses and
 * no rate limit answers them.
 */
export async function keyPropagation(options: { base: string; dataDir: string; accountId: string; rounds: number; address: () => string }): Promise<Propagation> {
  const env = { DATA_DIR: options.dataDir, LOG_LEVEL: 'warn' };
  const result: Propagation = { created: [], revoked: [], feed: [] };
  // The same feed the server follows, followed from this process too: when did the CLI's event arrive?
  const store = openSqliteEventStore(options.dataDir);
  const subscription = store.subscribe({ after: await store.headPosition(), batchSize: 100 });
  const arrived = new Map<string, number>();
  const following = (async () => {
    for await (const batch of subscription) {
      for (const event of batch) if (event.type === 'ApiKeyIssued') arrived.set(String(event.data.key_id), performance.now());
    }
  })();
  try {
    for (let round = 0; round < options.rounds; round++) {
      const made = await admin(['create-key', '--account', options.accountId, '--name', `propagation ${round}`, '--scopes', 'forms:read'], env);
      const answered = performance.now();
      result.created.push(await until(options.base, made.api_key!, 200, options.address));
      while (!arrived.has(made.key_id!)) await new Promise((resolve) => setTimeout(resolve, 1));
      result.feed.push(Math.max(0, arrived.get(made.key_id!)! - answered));
      await admin(['revoke-key', '--key', made.key_id!], env);
      result.revoked.push(await until(options.base, made.api_key!, 401, options.address));
    }
  } finally {
    await subscription.close();
    await following;
    await store.close();
  }
  return result;
}
