// The module hook source-content.mjs registers: see there for why.
const INLINE_MAP = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/;

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!url.startsWith('file://') || url.includes('/node_modules/') || loaded.source == null) return loaded;
  const text = typeof loaded.source === 'string' ? loaded.source : Buffer.from(loaded.source).toString('utf8');
  const found = INLINE_MAP.exec(text);
  if (found === null) return loaded;
  const map = JSON.parse(Buffer.from(found[1], 'base64').toString('utf8'));
  if (!Array.isArray(map.sourcesContent) || !map.sourcesContent.every((content) => content == null)) return loaded;
  delete map.sourcesContent;
  const encoded = Buffer.from(JSON.stringify(map)).toString('base64');
  return { ...loaded, source: `${text.slice(0, found.index)}//# sourceMappingURL=data:application/json;base64,${encoded}\n` };
}
