/**
 * The hosted page of a form or poll: a whole page of the service's own that
 * draws the object with the embed script, as a site would, so everything
 * the embed does (prefill, validation, themes) holds there too. Pure: the
 * object and the page's address in, HTML and its policy out.
 */
import { createHash } from 'node:crypto';
import type { HostedStrings } from '../embed/languages.js';
import { minHeightCss, type ReservedHeights } from '../embed/reserve.js';

export interface HostedObject {
  kind: 'form' | 'poll';
  id: string;
  title: string;
  description: string;
  /** Search engines list the page only when the owner says so. */
  indexable: boolean;
  reserve: ReservedHeights;
  /** The language the page is in (the object's own or one of its translations), and its direction. */
  lang: string;
  dir: 'ltr' | 'rtl';
}

const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Phone first: the embed fills the width less a margin; on a wider screen it sits in a column, away from the top. */
const PAGE_CSS =
  'html{background:#f3f4f6;color-scheme:light}body{margin:0;padding:16px;font:16px/1.5 system-ui,sans-serif;color:#111827}' +
  'main{max-width:560px;margin:0 auto}@media (min-width:640px){body{padding:48px 24px}}' +
  '.missing{background:#fff;border:1px solid #9ca3af;border-radius:12px;padding:18px}.missing h1{font-size:20px;margin:0 0 8px}.missing p{margin:0}';

/** The policy of a hosted page: its own script and the one stylesheet in it, by hash, so nothing injected runs. */
function policy(css: string): string {
  const hash = createHash('sha256').update(css).digest('base64');
  return `default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'sha256-${hash}'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

export interface HtmlPage {
  html: string;
  policy: string;
}

function document(head: string, body: string, css: string, lang = 'en', dir = 'ltr'): HtmlPage {
  return {
    html: `<!doctype html>
<html lang="${escape(lang)}"${dir === 'rtl' ? ' dir="rtl"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/dashboard/assets/icon.svg" type="image/svg+xml">
${head}
<style>${css}</style>
</head>
<body>
${body}
</body>
</html>
`,
    policy: policy(css),
  };
}

/**
 * The language a page of an object is in: the first of the visitor's
 * languages (`Accept-Language`) the object is written or translated in, the
 * same tag first, else the same primary language (`de-CH` finds `de`); else
 * the object's own. The embed picks among the browser's languages alike.
 */
export function pageLanguage(object: { language?: string | undefined; translations?: Record<string, unknown> | undefined }, wanted: readonly string[]): string {
  const own = object.language ?? 'en';
  const written = [own, ...Object.keys(object.translations ?? {})];
  const primary = (tag: string) => tag.toLowerCase().split(/[-_]/)[0];
  for (const tag of wanted) {
    const found = written.find((l) => l.toLowerCase() === tag.toLowerCase()) ?? written.find((l) => primary(l) === primary(tag));
    if (found) return found;
  }
  return own;
}

/** `url` is the page's own address, for `og:url`. */
export function hostedPage(object: HostedObject, url: string): HtmlPage {
  const title = escape(object.title);
  const description = escape(object.description);
  const head = [
    `<title>${title}</title>`,
    object.description ? `<meta name="description" content="${description}">` : '',
    object.indexable ? '' : '<meta name="robots" content="noindex">',
    '<meta property="og:type" content="website">',
    `<meta property="og:title" content="${title}">`,
    object.description ? `<meta property="og:description" content="${description}">` : '',
    `<meta property="og:url" content="${escape(url)}">`,
  ].filter(Boolean).join('\n');
  // The box holds the embed's first screen before the script draws it, so nothing on the page moves.
  const css = `${PAGE_CSS}[data-${object.kind}]{min-height:${minHeightCss(object.reserve)}}`;
  const body = `<main>
<div data-${object.kind}="${escape(object.id)}" data-hosted data-lang="${escape(object.lang)}"></div>
</main>
<script src="/embed.js" async></script>`;
  return document(head, body, css, object.lang, object.dir);
}

/** What an unknown or unpublished address shows, in the visitor's language (`lang`, with its words), and never to a search engine. */
export function missingPage(kind: 'form' | 'poll', language: { lang: string; dir: 'ltr' | 'rtl'; strings: HostedStrings }): HtmlPage {
  const { strings } = language;
  const head = `<title>${escape(strings.not_found)}</title>\n<meta name="robots" content="noindex">`;
  const body = `<main class="missing">
<h1>${escape(kind === 'form' ? strings.missing_form : strings.missing_poll)}</h1>
<p>${escape(strings.missing_why)}</p>
</main>`;
  return document(head, body, PAGE_CSS, language.lang, language.dir);
}
