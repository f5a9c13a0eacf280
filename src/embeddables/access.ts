import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../kernel/errors.js';
import type { Context } from '../kernel/context.js';
import { closed, domainNotAllowed, notPublished, type Kind } from './kinds.js';
import type { EmbeddableSummary } from './queries.js';
import type { Settings } from './settings.js';

/**
 * Who may answer an object, and when: its embed token, the site that embeds
 * it, its publication and its closing. Every public request about an object
 * (a submission, a vote, a page kept, a display) passes these checks, first
 * on the object's summary (gateOnSummary), then, for what is recorded, on
 * the state the decision is made on (checkAccess).
 */

// The embed token.

/** Spec 2.10 and 3.2: a token is valid for 1800 seconds from its issue. */
export const TOKEN_TTL_SECONDS = 1800 as const;
/** Issue times this far in the future still pass, for clocks of several instances that drift apart. */
const SKEW_MS = 5_000;

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

/**
 * `v1.<target>.<id>.<issued-at ms, base 36>.<HMAC>`: bound to one object and
 * carrying its issue time, which also gives the response its completion time.
 */
export function issueEmbedToken(key: Buffer, target: Kind, id: string, now: Date): string {
  const payload = `v1.${target}.${id}.${now.getTime().toString(36)}`;
  return `${payload}.${sign(key, payload)}`;
}

/**
 * Genuine tokens met lately, with their issue times, by the key that signed
 * them: a visit sends its one token with its display, its start and its
 * answers, and the signature's check was a tenth of counting a display.
 * Only tokens whose signature was checked are kept, at most GENUINE_KEPT a
 * key (all forgotten at once past that); their lifetime is checked at every
 * use.
 */
const genuine = new WeakMap<Buffer, Map<string, number>>();
const GENUINE_KEPT = 10_000;

/** The token's issue time when it is genuine, for this object, and not expired; otherwise null. */
export function verifyEmbedToken(key: Buffer, token: unknown, target: Kind, id: string, now: Date): Date | null {
  if (typeof token !== 'string' || token.length > 512) return null;
  let known = genuine.get(key);
  const issued = known?.get(token);
  // The token names its object in full ahead of its issue time, and no id holds a dot.
  if (issued !== undefined) return token.startsWith(`v1.${target}.${id}.`) ? withinLifetime(new Date(issued), now) : null;
  const parts = token.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1' || parts[1] !== target || parts[2] !== id) return null;
  const payload = parts.slice(0, 4).join('.');
  // The encodings are compared, not what they decode to: a base64url decoder
  // skips characters outside its alphabet and ignores padding and the spare
  // bits of the last character, so many strings decode to the one signature.
  const given = Buffer.from(parts[4]!, 'utf8');
  const expected = Buffer.from(sign(key, payload), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const issuedAt = Number.parseInt(parts[3]!, 36);
  if (!Number.isSafeInteger(issuedAt)) return null;
  if (known === undefined) genuine.set(key, (known = new Map()));
  if (known.size >= GENUINE_KEPT) known.clear();
  known.set(token, issuedAt);
  return withinLifetime(new Date(issuedAt), now);
}

/** The issue time of a genuine token while it is still valid at `now`; otherwise null. */
export function withinLifetime(issuedAt: Date, now: Date): Date | null {
  // An issue time no date can hold (a signed field past ±8.64e15 ms) is no lifetime at all.
  if (Number.isNaN(issuedAt.getTime())) return null;
  const age = now.getTime() - issuedAt.getTime();
  return age > TOKEN_TTL_SECONDS * 1000 || age < -SKEW_MS ? null : issuedAt;
}

// The site that embeds the object.

/**
 * Stands for the service's own pages (its hosted pages) as the embedding
 * host: every object's `allowed_domains` admits them.
 */
export const SERVICE_PAGE = '(this service)';

/**
 * The host that embeds the object: from Origin, else from Referer;
 * SERVICE_PAGE when that is the service itself (the address the request was
 * sent to, or PUBLIC_BASE_URL's).
 */
export function embeddingHost(headers: IncomingHttpHeaders, publicBaseUrl?: string): string | null {
  for (const name of ['origin', 'referer'] as const) {
    const value = headers[name];
    if (typeof value !== 'string' || value === 'null') continue;
    try {
      const url = new URL(value);
      const own = [headers.host, publicBaseUrl ? new URL(publicBaseUrl).host : undefined].filter(Boolean);
      return own.includes(url.host) ? SERVICE_PAGE : url.hostname.toLowerCase();
    } catch {
      return null;
    }
  }
  return null;
}

/** `example.com` admits that host only; `*.example.com` admits its subdomains too. */
export function hostAllowed(host: string | null, patterns: string[]): boolean {
  if (patterns.length === 0 || host === SERVICE_PAGE) return true;
  if (!host) return false;
  return patterns.some((pattern) =>
    pattern.startsWith('*.') ? host === pattern.slice(2) || host.endsWith(pattern.slice(1)) : host === pattern,
  );
}

// Publication and closing.

/** At or after `closes_at`. */
export const pastClosingTime = (settings: Settings, now: Date): boolean => Boolean(settings.closes_at && Date.parse(settings.closes_at) <= now.getTime());

/** Closed at or after `closes_at`, or once `max_responses` submissions were accepted. */
export function isClosed(doc: { settings: Settings; slots_taken?: number }, now: Date): boolean {
  const { max_responses } = doc.settings;
  return pastClosingTime(doc.settings, now) || (max_responses !== null && (doc.slots_taken ?? 0) >= max_responses);
}

/** What every public submission is checked against. */
export interface Gate {
  kind: Kind;
  id: string;
  published: boolean;
  settings: Settings;
}

export interface AccessFacts {
  now: Date;
  /** The embed token's issue time, or null when it is missing, forged, expired or another object's. */
  issuedAt: Date | null;
  host: string | null;
  /** The object has taken max_responses submissions already. */
  full: boolean;
}

/**
 * The rules before any answer is looked at, in the order the spec gives them:
 * published, not closed, token, domain. Facts in, the token's issue time
 * out, or the first rule broken as an AppError.
 */
export function checkAccess(target: Gate, facts: AccessFacts): Date {
  if (!target.published) throw notPublished(target.kind);
  if (pastClosingTime(target.settings, facts.now) || facts.full) throw closed(target.kind);
  if (!facts.issuedAt) throw new AppError('invalid_token', 'The embed token is missing, invalid or expired; fetch a new one');
  if (!hostAllowed(facts.host, target.settings.allowed_domains)) {
    throw domainNotAllowed(target.kind, facts.host);
  }
  return facts.issuedAt;
}

/**
 * The access rules of a public submission (published, not closed, token,
 * domain, in that order) checked on the object's summary, before its whole
 * state is loaded: a tokenless request never costs a definition's load, nor
 * a place in the state cache. The decision checks them again on the loaded
 * state and the quota stream, which are exact; the summary's count of slots
 * may lag a moment behind, which only lets a request through to that check.
 * Answers the token's issue time, so that the decision need not check its
 * signature again (only its lifetime, at its own moment).
 */
export function gateOnSummary(
  services: Pick<Context, 'keys' | 'config'>,
  kind: Kind,
  summary: EmbeddableSummary,
  request: { token: unknown; headers: IncomingHttpHeaders },
  now: Date,
): Date {
  const max = summary.settings.max_responses;
  return checkAccess(
    { kind, id: summary.id, published: summary.published, settings: summary.settings },
    {
      now,
      issuedAt: verifyEmbedToken(services.keys.embedTokens, request.token, kind, summary.id, now),
      host: embeddingHost(request.headers, services.config.PUBLIC_BASE_URL),
      full: max !== null && (summary.slots_taken ?? 0) >= max,
    },
  );
}
