import { z } from 'zod';
import { isoInstant } from '../kernel/instant.js';

/**
 * `allowed_domains` entries are host names; `*.example.com` also admits every
 * subdomain. Ports and schemes are not part of the match.
 */
export const DomainPattern = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a host name such as example.com or *.example.com');

/** An ISO 8601 instant with any offset, as the reference gives every timestamp: in UTC, to the millisecond, with `Z` (anything else as it is, for the format check to refuse). */
export function inUtc(instant: string): string {
  const at = Date.parse(instant);
  return Number.isNaN(at) ? instant : new Date(at).toISOString();
}

/**
 * Settings as the API shows them: `closes_at` in UTC whatever offset it was
 * stored with (settings stored before it was normalised on the way in keep
 * the client's offset in their events).
 */
export function shownSettings<S extends { closes_at: string | null }>(settings: S): S {
  return settings.closes_at === null ? settings : { ...settings, closes_at: inUtc(settings.closes_at) };
}

/** Submission settings shared by widgets, forms and polls. */
export const Settings = z.strictObject({
  /** Empty: any site may embed. */
  allowed_domains: z.array(DomainPattern).max(100).default([]),
  /** Submissions at or after this instant are refused with `*_closed`. Any offset is taken; it is kept and echoed in UTC (`Z`). */
  // An overwrite, not a transform: the OpenAPI document keeps the examples of the bodies that hold settings.
  closes_at: isoInstant().overwrite(inUtc).nullable().default(null),
  /** After this many accepted submissions the object is closed. */
  max_responses: z.number().int().min(1).max(100_000_000).nullable().default(null),
  // The two below are Pro and Business features: on a Free owner's objects they are stored but not enforced.
  /** Per client address, on submit and vote; separate from the plan's rate. */
  rate_limit: z.strictObject({ max: z.number().int().min(1).max(100_000), window_seconds: z.number().int().min(1).max(86_400) }).nullable().default(null),
  /** A submission whose `_hp` field is filled (by a bot) is answered as a success and not stored. */
  honeypot: z.boolean().default(false),
  /** Every plan: one submission per visitor (their fingerprint, else their address): a second is 409 `duplicate_submission`. Polls always take one vote per visitor. */
  prevent_duplicates: z.boolean().default(false),
  /**
   * Every plan, off (null) by default: the most submissions one address with one browser (user agent) makes in a clock hour,
   * whatever fingerprints it sends; more is 409 `duplicate_submission`. Many people share an address and a browser build
   * (a carrier's NAT, an office proxy), so a low figure turns them away.
   */
  network_limit_per_hour: z.number().int().min(1).max(100_000).nullable().default(null),
});
export type Settings = z.infer<typeof Settings>;

/** Forms and polls have a page of their own on the service (`/f/:id`, `/p/:id`). */
export const PageSettings = Settings.extend({
  /** The hosted page invites search engines to list it; false: it tells them not to (`noindex`). */
  indexable: z.boolean().default(false),
});
export type PageSettings = z.infer<typeof PageSettings>;
