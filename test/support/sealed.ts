/** What the tests of sealed personal fields share: the secret their keys derive under, and a response event to seal. */
import { catalog } from '../../src/domain-events.js';

export const SECRET = 'a-secret-of-at-least-thirty-two-characters!';
const meta = { occurred_at: '2026-11-22T10:00:00.000Z', actor: 'public' };

/** A stored ResponseSubmitted whose comment is `text`; `extra` adds or replaces data fields, `pageUrl` the metadata's. */
export const responseEvent = (id: string, text: string, { pageUrl = null, extra = {} }: { pageUrl?: string | null; extra?: Record<string, unknown> } = {}) =>
  catalog.serialize(
    {
      type: 'ResponseSubmitted',
      data: {
        response_id: id,
        account_id: 'acc_1',
        widget_id: 'wid_1',
        answers: { comment: text },
        metadata: { browser: null, browser_version: null, device: null, os: null, ip_hash: 'h', language: null, completion_time_ms: 1, page_url: pageUrl, page_title: null },
        submitted_at: '2026-11-22T10:00:00.000Z',
        ...extra,
      },
    },
    meta,
  );
