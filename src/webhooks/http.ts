import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export interface WebhookRequest {
  url: string;
  /** The address checked for the URL's host: the connection goes there, whatever the name resolves to now. */
  address: string;
  family: number;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** Answers the status, or throws when no answer came (refused, reset, timed out). Never follows a redirect. */
export type SendWebhook = (request: WebhookRequest) => Promise<{ status: number }>;

export const sendOverHttp: SendWebhook = (webhook) =>
  new Promise((resolve, reject) => {
    const url = new URL(webhook.url);
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [{ address: webhook.address, family: webhook.family }]);
      else callback(null, webhook.address, webhook.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      {
        method: 'POST',
        lookup,
        signal: AbortSignal.timeout(webhook.timeoutMs),
        headers: { ...webhook.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(webhook.body)), 'user-agent': 'feedback-service-webhooks' },
      },
      (response) => {
        // The body is the receiver's business: read and dropped, never kept.
        response.resume();
        response.on('error', () => undefined);
        resolve({ status: response.statusCode ?? 0 });
      },
    );
    request.on('error', reject);
    request.end(webhook.body);
  });
