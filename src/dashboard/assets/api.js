/**
 * The dashboard's one way to reach its JSON endpoints: same-origin cookies,
 * the session's CSRF token on every request, D3 error bodies turned into
 * ApiError. A lost session sends the browser to the signed-out page.
 */

export const SIGNED_OUT = '/dashboard/signed-out';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `Request failed (${status})`);
    this.name = 'ApiError';
    this.status = status;
    this.code = body?.code ?? 'unknown_error';
    this.details = body?.details ?? [];
  }
}

let csrfToken = null;

/** The token from the shell's meta tag, or a newer one from GET /session. */
export function setCsrfToken(token) {
  csrfToken = token;
}

function currentCsrfToken() {
  if (csrfToken === null) csrfToken = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
  return csrfToken;
}

export async function api(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = currentCsrfToken();
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/dashboard/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    // Under the service's no-referrer policy a POST would carry `Origin: null`, which the CSRF check refuses.
    referrerPolicy: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed);
    if (response.status === 401 && error.code === 'session_required') {
      location.assign(SIGNED_OUT);
      // The page is going away: keep callers from rendering an error meanwhile.
      return new Promise(() => {});
    }
    throw error;
  }
  return parsed;
}

/** A query string from the defined, non-empty values of `params`. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
