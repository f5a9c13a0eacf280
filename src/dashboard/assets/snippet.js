/** The tag a site owner pastes, as the README gives it. */
export function snippetOf(origin, kind, id) {
  return `<script src="${origin}/embed.js" data-${kind}="${id}" async></script>`;
}
