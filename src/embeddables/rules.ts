import type { Settings } from './settings.js';

/** At or after `closes_at`. */
export const pastClosingTime = (settings: Settings, now: Date): boolean => Boolean(settings.closes_at && Date.parse(settings.closes_at) <= now.getTime());

/** Closed at or after `closes_at`, or once `max_responses` submissions were accepted. */
export function isClosed(doc: { settings: Settings; slots_taken?: number }, now: Date): boolean {
  const { max_responses } = doc.settings;
  return pastClosingTime(doc.settings, now) || (max_responses !== null && (doc.slots_taken ?? 0) >= max_responses);
}
