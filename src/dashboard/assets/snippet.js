/**
 * The tag a site owner pastes, as the README gives it. Forms and polls: a
 * container where they go, holding the space they will take (`minHeight`,
 * the CSS length the service works out from the definition) so that nothing
 * on the page moves when they draw, and the script once per page. Widgets
 * float above the page and take no space: their script tag alone.
 */
export function snippetOf(origin, kind, id, minHeight) {
  if (kind === 'widget') return `<script src="${origin}/embed.js" data-widget="${id}" async></script>`;
  const style = minHeight ? ` style="min-height:${minHeight}"` : '';
  return `<div data-${kind}="${id}"${style}></div>\n<script src="${origin}/embed.js" async></script>`;
}
