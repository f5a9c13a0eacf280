import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/** How a host name resolves: every address, as `dns.lookup(host, {all: true})` answers. */
export type Resolve = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Where a webhook may not point: the service's own host and network, cloud
 * metadata, and whatever is not a unicast address on the internet. IPv4
 * embedded in IPv6 (mapped, NAT64, 6to4) is refused whole rather than
 * unpacked: no public endpoint needs it.
 */
const REFUSED_V4 = new BlockList();
// Apart: a list holding ::ffff:0:0/96 matches every IPv4 address too.
const REFUSED_V6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  REFUSED_V4.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // IPv4-compatible (::a.b.c.d, deprecated), which holds :: and ::1.
  ['::', 96],
  ['::ffff:0:0', 96],
  // IPv4-translated (RFC 2765).
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  // Documentation (RFC 3849; RFC 9637).
  ['2001:db8::', 32],
  ['3fff::', 20],
  // SRv6 segment identifiers (RFC 9602): never routed on the internet.
  ['5f00::', 16],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  REFUSED_V6.addSubnet(network, prefix, 'ipv6');
}

export function refusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return family === 4 ? REFUSED_V4.check(address, 'ipv4') : REFUSED_V6.check(address, 'ipv6');
}

export type TargetCheck = { ok: true; address: string; family: number } | { ok: false; reason: string };

/**
 * Resolves the URL's host and answers the address to connect to, or why
 * not. Every address the name resolves to must be allowed, and the request
 * then goes to the address checked here, so a name that resolves elsewhere
 * a moment later (DNS rebinding) changes nothing.
 */
export async function checkTarget(url: string, options: { allowPrivate: boolean; resolve: Resolve }): Promise<TargetCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return { ok: false, reason: 'only http and https URLs' };
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await options.resolve(host);
  } catch {
    return { ok: false, reason: `${host} does not resolve` };
  }
  const first = addresses[0];
  if (!first) return { ok: false, reason: `${host} does not resolve` };
  if (!options.allowPrivate && addresses.some(({ address }) => refusedAddress(address))) {
    return { ok: false, reason: `${host} resolves to a loopback, private, link-local or reserved address` };
  }
  return { ok: true, address: first.address, family: first.family };
}

/** Whether a URL names a user or password; false for text that is no URL (the URL check says so). */
function holdsCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/** The port a URL names, '' for its scheme's own; '' too for text that is no URL. */
function portOf(url: string): string {
  try {
    return new URL(url).port;
  } catch {
    return '';
  }
}

export const WebhookUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  // A URL parser drops tabs and line ends and trims spaces: the URL stored would not be the one given.
  .refine((url) => !/[\s\p{Cc}]/u.test(url), 'must not hold spaces or control characters')
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
  // zod runs these after a failed URL check too: they must not throw on what is no URL.
  .refine((url) => !holdsCredentials(url), 'must not hold credentials')
  .refine((url) => portOf(url) !== '0', 'port 0 takes no connection');
