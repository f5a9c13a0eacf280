/**
 * Starting a scavenge on KurrentDB / EventStoreDB nodes. Deleted streams stay
 * in a node's chunk files (and readable through $all) until a scavenge
 * rewrites those chunks without them; each node holds its own copy, so each
 * node needs its own scavenge.
 *
 * The gRPC client has no call for it, so it goes through the server's HTTP
 * operations endpoint: `POST /admin/scavenge` on the node's HTTP port, which
 * since EventStoreDB 20 is the port gRPC is served on (the client itself
 * sends its HTTP calls to the gRPC target). It needs a user in the `$admins`
 * or `$ops` group, except on a node in insecure mode, which checks no user;
 * so a connection string without one is tried as is, and the node's 401
 * says what is missing. It answers `{"scavengeId": "..."}` at once; the scavenge
 * then runs in the background. Query parameters left at the server's
 * defaults on purpose: `threshold` 0 (every chunk with something to remove:
 * a positive one would leave some erased events on disk) and
 * `throttlePercent` 100; `startFromChunk` is ignored by current servers.
 *
 * The connection string is read with the client's own rules
 * (dist/Client/parseConnectionString.js): `user:password@` right after the
 * scheme, percent-decoded; hosts separated by commas, port 2113 when none is
 * given; `tls` and `tlsVerifyCert` default to true; option names compare
 * case-insensitively without `-` and `_`.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** One node's scavenge request: everything needed to send it, nothing read from disk yet. */
export interface ScavengeRequest {
  /** `host:port`, for output and messages (never the credentials). */
  node: string;
  url: string;
  headers: Record<string, string>;
  /** Absent with `tls=false`. Files are paths from the connection string, read when sending. */
  tls?: { verify: boolean; caFile?: string; certFile?: string; keyFile?: string };
}

export interface ScavengeOptions {
  /** Threads the server uses for the scavenge (its default: 1). */
  threads?: number;
}

const SCHEME = /^(esdb|kurrentdb|kurrent|kdb)(\+discover)?:\/\//i;
const flat = (key: string) => key.trim().toLowerCase().replace(/[_-]/g, '');

/** Builds one request per node named in the connection string; throws on a string it cannot use. */
export function scavengeRequests(connectionString: string, options: ScavengeOptions = {}): ScavengeRequest[] {
  const trimmed = connectionString.trim().replace(/\/+$/, '');
  const scheme = SCHEME.exec(trimmed);
  if (!scheme) throw new Error('EVENTSTORE_URL must be a kurrentdb:// or esdb:// connection string');
  let rest = trimmed.slice(scheme[0].length);
  let credentials: { username: string; password: string } | undefined;
  const userinfo = /^([^:]+):([^@]+)@/.exec(rest);
  if (userinfo) {
    credentials = { username: decode(userinfo[1]!), password: decode(userinfo[2]!) };
    rest = rest.slice(userinfo[0].length);
  }
  const query = rest.indexOf('?');
  const hostList = (query < 0 ? rest : rest.slice(0, query)).replace(/\/+$/, '');
  const settings = new Map<string, string>();
  for (const pair of query < 0 ? [] : rest.slice(query + 1).split('&')) {
    const equals = pair.indexOf('=');
    if (equals > 0) settings.set(flat(pair.slice(0, equals)), pair.slice(equals + 1).trim());
  }
  const flag = (key: string, fallback: boolean): boolean => {
    const value = settings.get(key);
    if (value === undefined) return fallback;
    if (value !== 'true' && value !== 'false') throw new Error(`EVENTSTORE_URL: ${key} must be true or false`);
    return value === 'true';
  };
  const path = (key: string) => (settings.has(key) ? decode(settings.get(key)!) : undefined);
  const tls = flag('tls', true);
  const certFile = path('usercertfile');
  const keyFile = path('userkeyfile');

  const hosts = hostList.split(',').map((host) => host.trim()).filter(Boolean);
  if (hosts.length === 0) throw new Error('EVENTSTORE_URL names no host');
  const search = options.threads === undefined ? '' : `?threads=${options.threads}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (credentials) headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  return hosts.map((host) => {
    const [address, port = '2113', ...extra] = host.split(':');
    // Not echoed: a password with an unencoded `@` ends up in what looks like a host.
    if (!address || !/^[A-Za-z0-9._-]+$/.test(address) || extra.length > 0 || !/^\d{1,5}$/.test(port)) throw new Error('EVENTSTORE_URL: a host is not name[:port]');
    const node = `${address}:${port}`;
    return {
      node,
      url: `${tls ? 'https' : 'http'}://${node}/admin/scavenge${search}`,
      headers,
      ...(tls
        ? {
            tls: {
              verify: flag('tlsverifycert', true),
              ...(path('tlscafile') ? { caFile: path('tlscafile') } : {}),
              ...(certFile ? { certFile } : {}),
              ...(keyFile ? { keyFile } : {}),
            },
          }
        : {}),
    };
  });
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** How long a node may take to accept the request (the scavenge itself runs on after the answer). */
const ANSWER_TIMEOUT_MS = 30_000;

/** Sends one node's request and answers the id of the scavenge it started. */
export async function startScavenge(request: ScavengeRequest): Promise<string> {
  return scavengeIdFrom(request.node, await post(request));
}

export interface NodeAnswer {
  status: number;
  statusText: string;
  body: string;
}

/** Reads a node's answer to `POST /admin/scavenge`: the scavenge id, or an error of one line. */
export function scavengeIdFrom(node: string, { status, statusText, body }: NodeAnswer): string {
  const where = `KurrentDB node ${node}`;
  const said = body.replace(/\s+/g, ' ').trim().slice(0, 200);
  if (status === 401 || status === 403) {
    throw new Error(`${where} refused the scavenge (${status}): EVENTSTORE_URL must name a user of the $admins or $ops group (user:password@)`);
  }
  // 400 carries the server's reason as text, e.g. that a scavenge is already running.
  if (status < 200 || status >= 300) throw new Error(`${where} answered ${status} ${statusText}${said ? `: ${said}` : ''}`);
  let id: unknown;
  try {
    id = (JSON.parse(body) as { scavengeId?: unknown }).scavengeId;
  } catch {
    id = undefined;
  }
  if (typeof id !== 'string' || id === '') throw new Error(`${where} started no scavenge it could name: ${said || 'empty answer'}`);
  return id;
}

function post(request: ScavengeRequest): Promise<NodeAnswer> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(new Error(`KurrentDB node ${request.node}: ${error.message}`));
    let tlsOptions = {};
    try {
      if (request.tls) {
        tlsOptions = {
          rejectUnauthorized: request.tls.verify,
          ...(request.tls.caFile ? { ca: readFileSync(request.tls.caFile) } : {}),
          ...(request.tls.certFile ? { cert: readFileSync(request.tls.certFile) } : {}),
          ...(request.tls.keyFile ? { key: readFileSync(request.tls.keyFile) } : {}),
        };
      }
    } catch (error) {
      return fail(error as Error);
    }
    const onAnswer = (answer: IncomingMessage) => {
      let body = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => (body += chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, statusText: answer.statusMessage ?? '', body }));
      answer.on('error', fail);
    };
    const options = { method: 'POST', headers: { ...request.headers, 'content-length': '0' }, timeout: ANSWER_TIMEOUT_MS };
    const sent = request.tls ? httpsRequest(request.url, { ...options, ...tlsOptions }, onAnswer) : httpRequest(request.url, options, onAnswer);
    sent.on('timeout', () => sent.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)));
    sent.on('error', fail);
    sent.end();
  });
}
