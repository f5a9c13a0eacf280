import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';

/** TRUST_PROXY as fastify takes it; a hop count trusts that many proxies nearest to us. */
export function trustProxy(setting: boolean | number | string | undefined): boolean | string | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting ?? false;
}

/**
 * The client address of a request fastify has not seen, as fastify's
 * `request.ip` reads it under the same TRUST_PROXY (with the library it
 * uses): the socket's peer, or the nearest address in X-Forwarded-For that
 * a trusted proxy vouches for.
 */
export function clientAddressOf(setting: boolean | number | string | undefined): (request: IncomingMessage) => string | undefined {
  const trusted = trustProxy(setting);
  if (trusted === false) return (request) => request.socket.remoteAddress;
  const trust = trusted === true ? () => true : typeof trusted === 'string' ? proxyAddr.compile(trusted.split(',').map((value) => value.trim())) : trusted;
  return (request) => {
    const addresses = proxyAddr.all(request, trust);
    return addresses[addresses.length - 1];
  };
}

/** An IPv6 address as its eight groups of 16 bits, or null when it is not one. */
function groupsOf(address: string): number[] | null {
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return null;
  let text = bare;
  // A dotted IPv4 tail (`::ffff:192.0.2.1`) is the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  return tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * Whom a per-address rate limit counts: an IPv4 address as it is, and an
 * IPv6 one by its /64 network, the block a single site or subscriber is
 * given (RFC 6177), from which one client can take a fresh address for
 * every request. An IPv4 address written in IPv6 form is the IPv4 address.
 */
export function rateLimitedAddress(ip: string): string {
  if (isIPv4(ip)) return ip;
  const groups = groupsOf(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}
