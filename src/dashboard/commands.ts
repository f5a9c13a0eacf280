import { execute, load } from '../kernel/aggregate.js';
import { account } from '../accounts/account.js';
import { AppError } from '../kernel/errors.js';
import type { Context } from '../kernel/context.js';
import { issueLinkToken, LINK_TTL_MS, loginLink } from './login-link.js';

type Deps = Pick<Context, 'commands' | 'clock' | 'ids' | 'keys' | 'config'>;

/** Where links point when neither `--base` nor PUBLIC_BASE_URL says: the server as this configuration runs it. */
function baseUrl(deps: Pick<Context, 'config'>, base: string | undefined): string {
  const chosen = base ?? deps.config.PUBLIC_BASE_URL ?? `http://${deps.config.HOST.includes(':') ? `[${deps.config.HOST}]` : deps.config.HOST}:${deps.config.PORT}`;
  return chosen.replace(/\/+$/, '');
}

/**
 * A one-time dashboard link for an account, valid 15 minutes. The event
 * records the link's id, owner and expiry; the token is signed, never stored.
 */
export async function issueLoginLink(deps: Deps, input: { accountId: string; base?: string }, actor = 'cli') {
  const owner = await load(deps.commands, account, input.accountId);
  if (owner.status !== 'open') throw new AppError('account_not_found', 'no such account');
  const at = deps.clock();
  const expiresAt = new Date(at.getTime() + LINK_TTL_MS);
  const linkId = deps.ids('lnk');
  await execute(
    deps.commands,
    loginLink,
    linkId,
    { type: 'IssueLoginLink', link_id: linkId, account_id: input.accountId, expires_at: expiresAt.toISOString(), at: at.toISOString() },
    { actor, at },
  );
  const token = issueLinkToken(deps.keys.loginLinks, { linkId, accountId: input.accountId, expiresAt });
  return { url: `${baseUrl(deps, input.base)}/dashboard/login?t=${token}`, expires_at: expiresAt.toISOString() };
}
