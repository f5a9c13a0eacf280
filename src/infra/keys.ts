import { createHmac } from 'node:crypto';

/**
 * One secret, several keys: each use gets its own key derived with HMAC, so a
 * token signature can never double as an IP hash.
 */
export interface DerivedKeys {
  embedTokens: Buffer;
  hashes: Buffer;
  /** Signs page cursors, so a client can hold one but not forge or alter it. */
  cursors: Buffer;
  /** Derives each webhook endpoint's signing secret from its stored salt. */
  webhookSecrets: Buffer;
  /** Signs dashboard login links. */
  loginLinks: Buffer;
  /** Hashes dashboard session secrets, so a session is found without storing its cookie. */
  sessions: Buffer;
  /** Derives each dashboard session's CSRF token from its id. */
  csrf: Buffer;
}

export function deriveKeys(secret: string): DerivedKeys {
  const derive = (purpose: string) => createHmac('sha256', secret).update(`feedback-service:${purpose}`).digest();
  return {
    embedTokens: derive('embed-tokens'),
    hashes: derive('hashes'),
    cursors: derive('cursors'),
    webhookSecrets: derive('webhook-secrets'),
    loginLinks: derive('login-links'),
    sessions: derive('dashboard-sessions'),
    csrf: derive('dashboard-csrf'),
  };
}

/** D10: HMAC-SHA-256 under the server secret, hex. */
export function keyedHash(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('hex');
}
