import { createHash, createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * An endpoint's signing secret, `whsec_` and base64 of 32 bytes, derived
 * from its random salt under the server secret: the history and the read
 * models hold the salt only, useless without the server secret.
 */
export function endpointSecret(key: Buffer, endpointId: string, salt: string): string {
  return `whsec_${createHmac('sha256', key).update(`${endpointId}.${salt}`).digest('base64')}`;
}

/** Stable per event and endpoint, across retries and replays: receivers dedupe on it. */
export function messageId(endpointId: string, eventId: string): string {
  return `msg_${createHash('sha256').update(`${endpointId}.${eventId}`).digest('base64url').slice(0, 32)}`;
}

/**
 * The Standard Webhooks headers: `v1,` and base64 of HMAC-SHA256(secret
 * bytes, "id.timestamp.body"), one signature per secret, separated by
 * spaces as the scheme lays out for a secret being rotated.
 */
export function signatureHeaders(secrets: string[], id: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}
