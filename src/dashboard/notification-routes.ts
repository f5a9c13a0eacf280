import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { EMBEDDABLES, ownEmbeddable } from '../embeddables/queries.js';
import { Params } from '../embeddables/kinds.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';
import { AppError } from '../kernel/errors.js';
import { chooseNotifications, notificationsOf, readUnsubscribe, setSlack, unsubscribe } from '../notifications/commands.js';
import { knownTimeZone } from '../notifications/schedule.js';
import { DEFAULT_CHOICE } from '../notifications/settings.js';
import { WebhookUrl } from '../webhooks/targets.js';
import { atLeast } from '../members/roles.js';
import { requireSession, sessionOf } from './auth.js';
import { escapeHtml, page, sendPage } from './pages.js';
import { takeForms } from './sign-in.js';

const Mode = z.enum(['each', 'digest', 'none']);
const Choice = z.object({ mode: Mode, digest_hour: z.number().int().min(0).max(23), time_zone: z.string(), include_answers: z.boolean() });
/** Omitted fields keep the member's current choice (or the default). */
const ChoiceBody = z.strictObject({
  mode: Mode.optional(),
  digest_hour: z.number().int().min(0).max(23).optional(),
  time_zone: z.string().max(64).refine(knownTimeZone, 'must be an IANA time zone, such as UTC or Europe/Berlin').optional(),
  include_answers: z.boolean().optional(),
});
const SlackBody = z.strictObject({ url: WebhookUrl.nullable() });
const NotificationsView = z.object({ mine: Choice, slack_url: z.string().nullable() });
const TokenQuery = z.object({ t: z.string().max(500).optional() });

const PATHS = [['widgets', 'widget'], ['forms', 'form'], ['polls', 'poll']] as const;

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

function linkRefused(reply: FastifyReply, error: AppError): FastifyReply {
  return sendPage(reply, error.statusCode, page('Cannot use this link', `<h1>This link cannot be used</h1>\n<p>${escapeHtml(error.message)}.</p>\n<p><a href="/dashboard">Sign in to the dashboard</a> to change your notifications there.</p>`));
}

/**
 * Notifications on an object's page: each member's own choice (any role
 * chooses for themself), the object's Slack address (admins and owners),
 * and the one-click unsubscribe link of every notification email, which
 * needs no session.
 */
export async function notificationRoutes(app: App, services: Context): Promise<void> {
  const viewer = requireSession(services, { role: 'viewer' });
  const admin = requireSession(services, { role: 'admin' });
  const hide = { hide: true };

  for (const [path, kind] of PATHS) {
    const what = EMBEDDABLES[kind];
    app.get(`/dashboard/api/${path}/:id/notifications`, { onRequest: viewer, schema: { ...hide, params: Params, response: { 200: NotificationsView } } }, async (request) => {
      const current = sessionOf(request);
      await ownEmbeddable(services, what, request.params.id, current.accountId);
      const found = await notificationsOf(services, request.params.id, current.member?.id ?? null);
      // The Slack address is a credential of the account's workspace: shown to those who may change it.
      return { ...found, slack_url: atLeast(current.role, 'admin') ? found.slack_url : null };
    });

    app.put(`/dashboard/api/${path}/:id/notifications`, { onRequest: viewer, schema: { ...hide, params: Params, body: ChoiceBody, response: { 200: NotificationsView } } }, async (request) => {
      const current = sessionOf(request);
      await ownEmbeddable(services, what, request.params.id, current.accountId);
      if (!current.member) throw new AppError('forbidden', "This session is the operator's (a login link of the admin command line), not a member's: notifications go to members");
      const before = await notificationsOf(services, request.params.id, current.member.id);
      const { mode, digest_hour, time_zone, include_answers } = { ...DEFAULT_CHOICE, ...before.mine, ...request.body };
      const mine = await chooseNotifications(services, { accountId: current.accountId, objectId: request.params.id, kind }, current.member, { mode, digest_hour, time_zone, include_answers }, request.id);
      return { mine, slack_url: atLeast(current.role, 'admin') ? before.slack_url : null };
    });

    app.put(`/dashboard/api/${path}/:id/notifications/slack`, { onRequest: admin, schema: { ...hide, params: Params, body: SlackBody, response: { 200: z.object({ slack_url: z.string().nullable() }) } } }, async (request) => {
      const current = sessionOf(request);
      await ownEmbeddable(services, what, request.params.id, current.accountId);
      const set = await setSlack(services, { accountId: current.accountId, objectId: request.params.id, kind }, request.body.url, current.by, request.id);
      return { slack_url: set.url };
    });
  }

  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    takeForms(scope);
    // RFC 8058 lets a mail client send the one-click body as multipart/form-data too: its content is not needed.
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 4096 }, (_request, _body, done) => done(null, {}));

    // A GET never unsubscribes (mail scanners follow links): it shows a button that POSTs.
    scope.get('/notifications/unsubscribe', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      try {
        readUnsubscribe(services, request.query.t);
      } catch (error) {
        if (error instanceof AppError) return linkRefused(reply, error);
        throw error;
      }
      const action = `/notifications/unsubscribe?t=${encodeURIComponent(String(request.query.t))}`;
      return sendPage(
        reply,
        200,
        page(
          'Unsubscribe',
          `<h1>Unsubscribe from these notifications?</h1>
<p>You will get no more emails about this object. You can turn them on again on its page in the dashboard.</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>`,
          '<meta name="referrer" content="no-referrer">\n',
        ),
      );
    });

    // RFC 8058: the mail client POSTs `List-Unsubscribe=One-Click` to the link; the token in the query is all it needs.
    scope.post('/notifications/unsubscribe', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      try {
        await unsubscribe(services, request.query.t, request.id);
      } catch (error) {
        if (error instanceof AppError && wantsHtml(request)) return linkRefused(reply, error);
        throw error;
      }
      if (wantsHtml(request)) {
        return sendPage(reply, 200, page('Unsubscribed', '<h1>You are unsubscribed</h1>\n<p role="status">You will get no more emails about this object. You can turn them on again on its page in the dashboard.</p>\n<p><a href="/dashboard">Go to the dashboard</a></p>'));
      }
      return reply.code(200).send({ unsubscribed: true });
    });
  });
}
