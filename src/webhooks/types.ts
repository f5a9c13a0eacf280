import { z } from 'zod';

/** What an endpoint can subscribe to: the types below, a kind's `*`, or `*` for all. */
export const WEBHOOK_TYPES = [
  'response.created',
  'response.erased',
  'vote.cast',
  ...(['widget', 'form', 'poll'] as const).flatMap((kind) => (['created', 'updated', 'published', 'unpublished', 'deleted'] as const).map((what) => `${kind}.${what}` as const)),
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

export const WebhookTypePattern = z.enum([...WEBHOOK_TYPES, 'response.*', 'vote.*', 'widget.*', 'form.*', 'poll.*', '*']);

/** Whether an endpoint subscribed with these patterns receives events of this type. */
export function subscribed(patterns: readonly string[], type: string): boolean {
  return patterns.some((pattern) => pattern === '*' || pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))));
}
