/** The session aggregate and the login-link token, as pure functions: given / when / then. */
import t from 'tap';
import { loginLink, checkLinkToken, issueLinkToken, readLinkToken } from '../../src/dashboard/login-link.js';
import { session, sessionEndsAt, SESSION_LIFETIME_MS } from '../../src/dashboard/session.js';
import { AppError } from '../../src/kernel/errors.js';
import { aggregateOf } from '../support/decider.js';

const LINK = 'lnk_01M82YMB2V3ZKQ8W5N1T6R4C9D';
const ACCOUNT = 'acc_01M82YMAXMQAPXXC00S78T8AVK';
const SESSION = `ses_${'a'.repeat(64)}`;
const signedIn = { type: 'DashboardSignedIn' as const, data: { session_id: SESSION, account_id: ACCOUNT, link_id: LINK, signed_in_at: '2026-11-22T10:00:00.000Z' } };
const signIn = (session_id = SESSION) => ({ type: 'SignIn' as const, session_id, account_id: ACCOUNT, link_id: LINK, at: '2026-11-22T10:00:00.000Z' });
const signOut = (reason: 'signed_out' | 'expired' = 'signed_out', session_id = SESSION) => ({ type: 'SignOut' as const, session_id, reason, at: '2026-11-22T10:20:00.000Z' });

t.test('a link signs in once', async (t) => {
  const link = aggregateOf(t, session);
  link.given([]).when(signIn()).then([signedIn]);
  link.given([signedIn]).when(signIn(`ses_${'b'.repeat(64)}`)).thenThrows('login_link_used');
  const ended = { type: 'DashboardSignedOut' as const, data: { session_id: SESSION, account_id: ACCOUNT, reason: 'signed_out' as const, signed_out_at: '2026-11-22T10:20:00.000Z' } };
  link.given([signedIn, ended]).when(signIn()).thenThrows('login_link_used', 'not again after signing out either');
});

t.test('a session ends once, for either reason', async (t) => {
  const link = aggregateOf(t, session);
  link.given([signedIn]).when(signOut()).then([{ type: 'DashboardSignedOut', data: { session_id: SESSION, account_id: ACCOUNT, reason: 'signed_out', signed_out_at: '2026-11-22T10:20:00.000Z' } }]);
  link.given([signedIn]).when(signOut('expired')).thenMatches([{ data: { reason: 'expired' } }]);
  const ended = { type: 'DashboardSignedOut' as const, data: { session_id: SESSION, account_id: ACCOUNT, reason: 'expired' as const, signed_out_at: '2026-11-22T10:20:00.000Z' } };
  link.given([signedIn, ended]).when(signOut()).then([], 'ending an ended session changes nothing');
  link.given([]).when(signOut()).then([], 'nor one that never started');
  link.given([signedIn]).when(signOut('signed_out', `ses_${'b'.repeat(64)}`)).then([], 'another session id ends nothing');
  t.equal(session.streamId(LINK), `login-${LINK}`, 'the link\'s stream');
});

t.test('a link is issued once', async (t) => {
  const issue = { type: 'IssueLoginLink' as const, link_id: LINK, account_id: ACCOUNT, expires_at: '2026-11-22T10:15:00.000Z', at: '2026-11-22T10:00:00.000Z' };
  const issued = { type: 'LoginLinkIssued' as const, data: { link_id: LINK, account_id: ACCOUNT, expires_at: '2026-11-22T10:15:00.000Z', issued_at: '2026-11-22T10:00:00.000Z' } };
  aggregateOf(t, loginLink).given([]).when(issue).then([issued]);
  aggregateOf(t, loginLink).given([issued]).when(issue).thenThrows('conflict');
  t.not(loginLink.streamId(LINK), session.streamId(LINK), 'apart from the stream a sign-in starts');
});

t.test('when a session ends: idle or lifetime, whichever first', async (t) => {
  const start = new Date('2026-11-22T10:00:00.000Z');
  const idle = 30 * 60_000;
  t.equal(sessionEndsAt(start, start, idle).toISOString(), '2026-11-22T10:30:00.000Z');
  t.equal(sessionEndsAt(start, new Date('2026-11-22T15:00:00.000Z'), idle).toISOString(), '2026-11-22T15:30:00.000Z');
  t.equal(sessionEndsAt(start, new Date('2026-11-22T21:50:00.000Z'), idle).toISOString(), new Date(start.getTime() + SESSION_LIFETIME_MS).toISOString());
});

t.test('link tokens: signed claims, refused when altered or under another key, expired at their time', async (t) => {
  const key = Buffer.alloc(32, 1);
  const claims = { linkId: LINK, accountId: ACCOUNT, expiresAt: new Date('2026-11-22T10:15:00.000Z') };
  const token = issueLinkToken(key, claims);
  t.strictSame(readLinkToken(key, token), claims);
  const code = (fn: () => unknown) => {
    try {
      fn();
      return 'accepted';
    } catch (error) {
      return error instanceof AppError ? error.code : String(error);
    }
  };
  t.equal(code(() => readLinkToken(Buffer.alloc(32, 2), token)), 'login_link_invalid', 'another key');
  t.equal(code(() => readLinkToken(key, token.replace(ACCOUNT, 'acc_01M82YMAXMQAPXXC00S78T8AVM'))), 'login_link_invalid', 'another account');
  t.equal(code(() => readLinkToken(key, `${token}.x`)), 'login_link_invalid');
  t.equal(code(() => readLinkToken(key, 42)), 'login_link_invalid');
  t.equal(code(() => checkLinkToken(key, token, new Date('2026-11-22T10:14:59.999Z'))), 'accepted');
  t.equal(code(() => checkLinkToken(key, token, new Date('2026-11-22T10:15:00.000Z'))), 'login_link_expired');
});
