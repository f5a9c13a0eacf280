/**
 * The dashboard's one way to reach its JSON endpoints: same-origin cookies,
 * the session's CSRF token on every request, D3 error bodies turned into
 * ApiError. A lost session sends the browser to the signed-out page, except
 * on a change: that fails with a message, and what the owner entered stays
 * on the page to be sent again once they signed in (in another tab).
 */

export const SIGNED_OUT = '/dashboard/signed-out';

let leaving = false;

/**
 * Goes to the signed-out page once: a sign-out and a read answered 401 while
 * it is under way would otherwise start a second navigation that aborts the first.
 */
export function leaveSignedOut() {
  if (leaving) return;
  leaving = true;
  location.assign(SIGNED_OUT);
}

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

const SESSION_ENDED = 'your session has ended. What you entered is still here: sign in again in another tab (with a new login link), then try again on this page.';

/** The CSRF token of the session the browser holds now, when it is not the one this page has: signed in again in another tab. */
async function newerCsrfToken() {
  const response = await fetch('/dashboard/api/session', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  if (!response.ok) return null;
  const token = (await response.json().catch(() => null))?.csrf_token;
  return typeof token === 'string' && token !== currentCsrfToken() ? token : null;
}

export async function api(path, { method = 'GET', body } = {}, again = false) {
  const headers = { accept: 'application/json' };
  const change = method !== 'GET' && method !== 'HEAD';
  if (change) headers['x-csrf-token'] = currentCsrfToken();
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
      if (change) throw new ApiError(401, { code: error.code, message: SESSION_ENDED });
      leaveSignedOut();
      // The page is going away: keep callers from rendering an error meanwhile.
      return new Promise(() => {});
    }
    if (change && !again && response.status === 403 && error.code === 'csrf_rejected') {
      const token = await newerCsrfToken();
      if (token) {
        setCsrfToken(token);
        return api(path, { method, body }, true);
      }
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
