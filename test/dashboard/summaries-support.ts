import { randomBytes } from 'node:crypto';
import { fastifyCookie } from '@fastify/cookie';
import type { Test } from 'tap';
import { execute } from '../../src/aggregate.js';
import { sessionIdOf } from '../../src/dashboard/auth.js';
import { session } from '../../src/dashboard/session.js';
import { summaryRoutes } from '../../src/dashboard/summary-routes.js';
import type { ServiceOptions, Services } from '../../src/services.js';
import { testApp } from '../support/app.js';

/** The app with the dashboard's summary routes, whether or not the app registers the dashboard yet. */
export async function dashboardApp(t: Test, options: ServiceOptions = {}) {
  const built = await testApp(t, options);
  if (!built.app.hasRoute({ method: 'GET', url: '/dashboard/api/overview' })) {
    // As the dashboard's plugin registers them: the cookie parser, then the routes.
    await built.app.register(fastifyCookie);
    await built.app.register(summaryRoutes, { services: built.services });
  }
  return built;
}

/** A signed-in dashboard session of the account, as a sign-in by login link records it: the cookie header that carries it. */
export async function signedIn(services: Services, accountId: string): Promise<{ cookie: string }> {
  const secret = randomBytes(32).toString('base64url');
  const linkId = services.ids('lnk');
  const at = services.clock();
  await execute(services.commands, session, linkId, { type: 'SignIn', session_id: sessionIdOf(services, secret), account_id: accountId, link_id: linkId, at: at.toISOString() }, { actor: 'test', at });
  return { cookie: `fs_session=${secret}` };
}
