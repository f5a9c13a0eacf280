import { z } from 'zod';
import { minHeightCss, reservedHeights, type ReservedHeights } from '../embed/reserve.js';
import { notFound, Params } from '../embeddables/kinds.js';
import { FORM, POLL, findEmbeddable, type Embeddable, type EmbeddableDoc } from '../embeddables/queries.js';
import { ownOrigin } from '../hosted/routes.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';
import { requireSession, sessionOf } from './auth.js';

/** How the owner shares a form or poll: the space its embed takes, its hosted page, and a QR code of that page. */
export const Share = z.object({
  /** The inline embed's first screen, in px, and the CSS `min-height` the snippet's container holds. */
  min_height: z.object({ desktop: z.number().int(), phone: z.number().int(), css: z.string() }),
  hosted_url: z.string(),
  /** An SVG image of a QR code of `hosted_url`. */
  qr_svg: z.string(),
});

/** GET /dashboard/api/{forms|polls}/:id/share: worked out from the definition as it is now, so the snippet follows every change. */
export function shareRoutes(app: App, services: Context): void {
  const session = requireSession(services);
  const route = <D extends EmbeddableDoc>(path: string, what: Embeddable<D>, prefix: string, heights: (doc: D) => ReservedHeights) =>
    app.get(`/dashboard/api/${path}/:id/share`, { onRequest: session, schema: { hide: true, params: Params, response: { 200: Share } } }, async (request) => {
      const doc = await findEmbeddable(services, what, request.params.id);
      if (!doc || doc.account_id !== sessionOf(request).accountId) throw notFound(what.kind);
      const reserve = heights(doc);
      const hosted = `${ownOrigin(services, request)}${prefix}/${doc.id}`;
      const { default: QRCode } = await import('qrcode');
      const svg = await QRCode.toString(hosted, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
      return { min_height: { ...reserve, css: minHeightCss(reserve) }, hosted_url: hosted, qr_svg: svg };
    });
  route('forms', FORM, '/f', (form) => reservedHeights('form', form));
  route('polls', POLL, '/p', (poll) => reservedHeights('poll', poll));
}
