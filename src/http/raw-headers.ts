/**
 * How many times the request sent a header, counted in its raw lines: Node
 * keeps only the first of headers that may appear once (Authorization,
 * Content-Type), so the parsed headers cannot tell.
 */
export function headerCount(rawHeaders: readonly string[], name: string): number {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toLowerCase() === name) seen++;
  }
  return seen;
}
