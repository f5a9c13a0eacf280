import type { IncomingHttpHeaders } from 'node:http';
import Bowser from 'bowser';
import { z } from 'zod';
import type { Plan } from '../accounts/plans.js';
import type { GeoLookup } from '../infra/geo.js';
import { keyedHash } from '../infra/keys.js';

/** The text cut to `max` UTF-16 units, without the first half of a pair the cut splits. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** The most of a page address kept, as stored: the address as given is cut to it too (pageFact), and so is its form once percent-encoded, which a non-ASCII address makes longer. */
const MAX_URL = 2048;

/**
 * A page fact longer than `max` is cut to it rather than refused: the embed
 * reads it from the page (a URL carrying an app's state, a long title), the
 * visitor cannot shorten it, and refusing it would lose their answer.
 */
export const pageFact = (max: number) =>
  z
    .string()
    .overwrite((text) => clip(text, max))
    .meta({ description: `cut to its first ${max} characters when longer` });

/** What an embed may send about the page; camelCase on the wire (spec 2.6). Unknown keys are dropped. */
export const ClientMetadata = z.object({
  pageUrl: pageFact(MAX_URL).optional(),
  pageTitle: pageFact(500).optional(),
  fingerprint: pageFact(512).optional(),
  screenWidth: z.number().int().min(0).max(100_000).optional(),
  screenHeight: z.number().int().min(0).max(100_000).optional(),
  /**
   * document.referrer of the page: where the visitor came from. The request's
   * own Referer header names the embedding page (page_url), never this.
   */
  referrer: pageFact(MAX_URL).optional(),
});
export type ClientMetadata = z.infer<typeof ClientMetadata>;

const text = z.string().nullable();
const count = z.number().int().nullable();

/**
 * Stored response metadata (spec 2.7), snake_case. A field the owner's plan
 * does not get is absent; a field it gets but the request did not tell is null.
 */
export const ResponseMetadata = z.object({
  browser: text,
  browser_version: text,
  device: z.enum(['Desktop', 'Mobile', 'Tablet']).nullable(),
  os: text,
  ip_hash: z.string(),
  language: text,
  completion_time_ms: z.number().int().min(0),
  page_url: text,
  page_title: text,
  // Pro and Business
  screen_width: count.optional(),
  screen_height: count.optional(),
  fingerprint_hash: text.optional(),
  referer: text.optional(),
  referer_domain: text.optional(),
  // Business
  country: text.optional(),
  region: text.optional(),
  city: text.optional(),
  timezone: text.optional(),
  utm_source: text.optional(),
  utm_medium: text.optional(),
  utm_campaign: text.optional(),
  is_proxy: z.boolean().optional(),
});
export type ResponseMetadata = z.infer<typeof ResponseMetadata>;

type MetadataField = keyof ResponseMetadata;
const FREE_FIELDS: MetadataField[] = ['browser', 'browser_version', 'device', 'os', 'ip_hash', 'language', 'completion_time_ms', 'page_url', 'page_title'];
const PRO_FIELDS: MetadataField[] = [...FREE_FIELDS, 'screen_width', 'screen_height', 'fingerprint_hash', 'referer', 'referer_domain'];

/** The metadata fields each plan records (captureMetadata), in the stored shape's order. */
export const RECORDED_FIELDS: Record<Plan, MetadataField[]> = {
  free: FREE_FIELDS,
  pro: PRO_FIELDS,
  business: Object.keys(ResponseMetadata.shape) as MetadataField[],
};

export interface SubmissionRequest {
  headers: IncomingHttpHeaders;
  /** The client address, after the trusted proxies (fastify's request.ip). */
  ip: string;
  /** fastify's request.ips: the socket address, then each trusted hop. */
  ips?: string[];
  client: ClientMetadata;
}

export interface MetadataInput {
  plan: Plan;
  request: SubmissionRequest;
  issuedAt: Date;
  now: Date;
}

export interface MetadataDeps {
  hashKey: Buffer;
  geo: GeoLookup;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The preferred language of an Accept-Language header (highest q, first on ties). */
export function preferredLanguage(accept: string | undefined): string | null {
  if (!accept) return null;
  let best: { tag: string; q: number } | null = null;
  for (const part of accept.split(',').slice(0, 50)) {
    const [rawTag, ...params] = part.trim().split(';');
    const tag = rawTag?.trim() ?? '';
    // RFC 5646 asks for room for tags of 35 characters; a longer one is not a language a page is written in.
    if (tag.length > 35 || !/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag)) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { tag, q };
  }
  return best?.tag ?? null;
}

const DEVICES = { mobile: 'Mobile', tablet: 'Tablet', desktop: 'Desktop', tv: 'Desktop' } as const;

type Device = Pick<ResponseMetadata, 'browser' | 'browser_version' | 'os' | 'device'>;

/**
 * Parsing a user agent tries a long list of patterns, and most visitors
 * send one of a few common ones: the latest answers are kept (a bounded
 * number, of agents of a common length), oldest out first.
 */
const devices = new Map<string, Device>();
const DEVICES_KEPT = 1000;
const AGENT_KEPT_LENGTH = 512;

function device(userAgent: string): Device {
  const known = devices.get(userAgent);
  if (known) return known;
  const found = parseDevice(userAgent);
  if (userAgent.length <= AGENT_KEPT_LENGTH) {
    if (devices.size >= DEVICES_KEPT) devices.delete(devices.keys().next().value!);
    devices.set(userAgent, found);
  }
  return found;
}

/**
 * Names a parser takes from the agent string, cut to this: a made-up agent
 * (up to the 16 KB of headers) would otherwise be stored whole with every
 * response; real ones name a browser or a system in a few words.
 */
const DEVICE_NAME_MAX = 100;

function parseDevice(userAgent: string): Device {
  const parsed = Bowser.parse(userAgent);
  const type = parsed.platform.type as keyof typeof DEVICES | undefined;
  const name = (value: string | undefined) => (value ? clip(value, DEVICE_NAME_MAX) : null);
  return {
    browser: name(parsed.browser.name),
    browser_version: name(parsed.browser.version),
    os: name(parsed.os.name),
    device: type && type in DEVICES ? DEVICES[type] : parsed.browser.name ? 'Desktop' : null,
  };
}

/**
 * The address as stored: normalised, cut to MAX_URL characters, never
 * within a `%XX` escape nor within the escapes of one character (`ü` is
 * `%C3%BC`: a cut after `%C3` would leave a text no decoder takes).
 */
function stored(address: URL | null): string | null {
  if (!address) return null;
  const href = address.href;
  if (href.length <= MAX_URL) return href;
  let cut = href.slice(0, MAX_URL);
  const escape = /%[0-9A-Fa-f]?$/.exec(cut);
  if (escape) cut = cut.slice(0, escape.index);
  return cut.slice(0, cut.length - 3 * unfinishedBytes(cut));
}

/** How many of the trailing `%XX` escapes begin a UTF-8 character that the text ends before finishing. */
function unfinishedBytes(text: string): number {
  for (let back = 1; back <= 4 && text.length >= 3 * back; back++) {
    const escape = text.slice(text.length - 3 * back, text.length - 3 * back + 3);
    if (!/^%[0-9A-Fa-f]{2}$/.test(escape)) return 0;
    const byte = parseInt(escape.slice(1), 16);
    // A continuation byte: its character began further back.
    if (byte >= 0x80 && byte < 0xc0) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

function url(value: string | undefined): URL | null {
  if (!value) return null;
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * A visitor came through a proxy when the request says so (Via) or when the
 * forwarding chain is longer than the proxies this service trusts.
 */
function cameThroughProxy(request: SubmissionRequest): boolean {
  if (header(request.headers, 'via')) return true;
  const forwardedFor = header(request.headers, 'x-forwarded-for');
  const forwarded = header(request.headers, 'forwarded');
  const hops = (forwardedFor ? forwardedFor.split(',').length : 0) + (forwarded ? forwarded.split(',').length : 0);
  const trusted = Math.max(0, (request.ips?.length ?? 1) - 1);
  return hops > trusted;
}

const UNKNOWN_DEVICE: Device = { browser: null, browser_version: null, os: null, device: null };

const utm = (query: URLSearchParams | undefined, name: string): string | null => query?.get(name) || null;

/**
 * Spec 2.7 and D10: the metadata of one submission, by the owner's plan at
 * that moment. Each plan's fields are written in one object literal: this
 * runs for every submission.
 */
export async function captureMetadata(input: MetadataInput, deps: MetadataDeps): Promise<ResponseMetadata> {
  const { request, plan } = input;
  const { client } = request;
  const userAgent = header(request.headers, 'user-agent');
  const agent = userAgent ? device(userAgent) : UNKNOWN_DEVICE;
  const pageUrl = url(client.pageUrl);
  const ipHash = keyedHash(deps.hashKey, request.ip);
  const language = preferredLanguage(header(request.headers, 'accept-language'));
  const completionTime = Math.max(0, input.now.getTime() - input.issuedAt.getTime());
  if (plan === 'free') {
    return {
      browser: agent.browser,
      browser_version: agent.browser_version,
      os: agent.os,
      device: agent.device,
      ip_hash: ipHash,
      language,
      completion_time_ms: completionTime,
      page_url: stored(pageUrl),
      page_title: client.pageTitle ?? null,
    };
  }

  // Absent when the visitor opened the page directly: the submit request's
  // Referer is the host page itself, which would read as a referral from it.
  const referer = url(client.referrer);
  const fingerprintHash = client.fingerprint ? keyedHash(deps.hashKey, client.fingerprint) : null;
  if (plan === 'pro') {
    return {
      browser: agent.browser,
      browser_version: agent.browser_version,
      os: agent.os,
      device: agent.device,
      ip_hash: ipHash,
      language,
      completion_time_ms: completionTime,
      page_url: stored(pageUrl),
      page_title: client.pageTitle ?? null,
      screen_width: client.screenWidth ?? null,
      screen_height: client.screenHeight ?? null,
      fingerprint_hash: fingerprintHash,
      referer: stored(referer),
      referer_domain: referer ? referer.hostname : null,
    };
  }

  const geo = await deps.geo(request.ip);
  // Only a page address with a query can carry UTM parameters.
  const query = pageUrl && pageUrl.search ? pageUrl.searchParams : undefined;
  return {
    browser: agent.browser,
    browser_version: agent.browser_version,
    os: agent.os,
    device: agent.device,
    ip_hash: ipHash,
    language,
    completion_time_ms: completionTime,
    page_url: stored(pageUrl),
    page_title: client.pageTitle ?? null,
    screen_width: client.screenWidth ?? null,
    screen_height: client.screenHeight ?? null,
    fingerprint_hash: fingerprintHash,
    referer: stored(referer),
    referer_domain: referer ? referer.hostname : null,
    country: geo?.country ?? null,
    region: geo?.region ?? null,
    city: geo?.city ?? null,
    timezone: geo?.timezone ?? null,
    utm_source: utm(query, 'utm_source'),
    utm_medium: utm(query, 'utm_medium'),
    utm_campaign: utm(query, 'utm_campaign'),
    is_proxy: cameThroughProxy(request),
  };
}

/** The breakdowns a display or start counts under, as captureMetadata records them of a response. */
export interface MetadataFacets {
  device?: ResponseMetadata['device'];
  referer_domain?: string | null;
  country?: string | null;
  utm_source?: string | null;
  utm_medium?: string | null;
  utm_campaign?: string | null;
}

/**
 * Of captureMetadata, only the breakdowns by plan (device; referring domain
 * on Pro; country and UTM tags on Business), with the same values: a
 * display or start keeps nothing else, so nothing else (no address hash) is
 * worked out for it.
 */
export async function captureFacets(plan: Plan, request: Pick<SubmissionRequest, 'headers' | 'ip' | 'client'>, geo: GeoLookup): Promise<MetadataFacets> {
  const userAgent = header(request.headers, 'user-agent');
  const agent = userAgent ? device(userAgent) : UNKNOWN_DEVICE;
  if (plan === 'free') return { device: agent.device };
  const referer = url(request.client.referrer);
  if (plan === 'pro') return { device: agent.device, referer_domain: referer ? referer.hostname : null };
  const pageUrl = url(request.client.pageUrl);
  const query = pageUrl && pageUrl.search ? pageUrl.searchParams : undefined;
  const place = await geo(request.ip);
  return {
    device: agent.device,
    referer_domain: referer ? referer.hostname : null,
    country: place?.country ?? null,
    utm_source: utm(query, 'utm_source'),
    utm_medium: utm(query, 'utm_medium'),
    utm_campaign: utm(query, 'utm_campaign'),
  };
}
