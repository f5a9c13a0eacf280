import { AppError, type ErrorDetail } from '../kernel/errors.js';
import { cleanJsonText, stripControls, textProblem } from '../kernel/text.js';
import type { App } from './instance.js';
import { headerCount } from './raw-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's JSON text holds no control character and no escape (see cleanJsonText): its strings need no look of their own. */
    cleanBody: boolean;
  }
}

/** Every string and key in a parsed JSON value that textProblem refuses, by its path; a loop, as bodies may nest deeper than the stack. */
export function textProblems(root: unknown, rootPath: string, found: ErrorDetail[] = []): ErrorDetail[] {
  // Each value with its parent's path and its key: a path is written out only when it is shown or its value has children.
  const pending: Array<[unknown, string, string | undefined]> = [[root, rootPath, undefined]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, parent, key] = next;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) found.push({ path: key === undefined ? parent : `${parent}.${key}`, message: problem });
    } else if (value !== null && typeof value === 'object') {
      const here = key === undefined ? parent : `${parent}.${key}`;
      for (const [name, item] of Object.entries(value)) {
        const problem = textProblem(name);
        // The key itself is the bad text: it is shown escaped.
        if (problem) found.push({ path: `${here}.${JSON.stringify(name).slice(1, -1)}`, message: `has a key that ${problem}` });
        pending.push([item, here, name]);
      }
    }
  }
  return found;
}

/** The page facts are flat strings and numbers (ClientMetadata); anything else is left to the schema to refuse. */
const stripFacts = (value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, typeof item === 'string' ? stripControls(item) : item]))
    : value;

/**
 * Control characters in text (titles, questions, answers, every string of a
 * body, query or path) are refused with 400 naming the field: the sender can
 * correct what a person typed, and nothing is changed behind their back. The
 * `metadata` of a submission or a vote is the exception: the embed reads it
 * from the page (URL, title, referrer, fingerprint), the visitor cannot fix
 * it, and refusing it would lose their answer, so it is stripped instead.
 */
export function refuseControlCharacters(app: App): void {
  app.addHook('preValidation', async (request) => {
    const body = request.cleanBody ? undefined : (request.body as Record<string, unknown> | null | undefined);
    if (body && typeof body === 'object' && !Array.isArray(body) && 'metadata' in body) body.metadata = stripFacts(body.metadata);
    const problems = textProblems(body, 'body', textProblems(request.query, 'querystring', textProblems(request.params, 'params')));
    if (problems.length > 0) throw new AppError('validation_error', 'The request holds control characters', problems);
  });
}

const UTF8 = new Set(['utf-8', 'utf8']);

/**
 * Every parameter of a media type (RFC 9110 §5.6.6), in order, names in
 * lower case and quoted values unquoted, several of one name each kept: a
 * `;` or `charset=` inside a quoted value belongs to that value.
 */
function parametersOf(mediaType: string): Array<[name: string, value: string]> {
  const found: Array<[string, string]> = [];
  let at = mediaType.indexOf(';');
  while (at !== -1) {
    let name = '';
    let value = '';
    let inValue = false;
    let quoted = false;
    let end = at + 1;
    for (; end < mediaType.length; end++) {
      const c = mediaType[end]!;
      if (quoted) {
        if (c === '\\' && end + 1 < mediaType.length) value += mediaType[++end];
        else if (c === '"') quoted = false;
        else value += c;
      } else if (c === ';') break;
      else if (!inValue) {
        if (c === '=') inValue = true;
        else name += c;
      } else if (c === '"') quoted = true;
      else value += c;
    }
    found.push([name.trim().toLowerCase(), value.trim()]);
    at = end < mediaType.length ? end : -1;
  }
  return found;
}

/**
 * JSON is UTF-8 (RFC 8259). Read leniently, bytes that are not UTF-8 (Latin-1
 * sent undeclared, say) would each become U+FFFD and be stored as such; they
 * are refused instead. The parsing after that is fastify's own.
 */
export function readJsonAsUtf8(app: App): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  app.decorateRequest('cleanBody', false);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // A route that takes no body (rotate a secret, replay) takes an empty one labelled JSON, as many clients send it.
    if ((body as Buffer).length === 0 && request.routeOptions.schema?.body === undefined) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = decoder.decode(body as Buffer);
    } catch {
      done(new AppError('validation_error', 'The request body is not valid UTF-8', [{ path: 'body', message: 'holds bytes that are not UTF-8' }]), undefined);
      return;
    }
    request.cleanBody = cleanJsonText(text);
    parse(request, text, (error, value) => {
      // The parser refuses `__proto__` (and `constructor.prototype`) keys, prototype poisoning's way in, as it refuses broken JSON: said apart.
      if (error && isJson(text)) {
        done(new AppError('validation_error', 'The request body holds a key that is refused', [{ path: 'body', message: 'holds a `__proto__` key, or a `constructor` key holding `prototype`, which are refused' }]), undefined);
        return;
      }
      done(error, value);
    });
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A body declared in another charset, or compressed (`Content-Encoding`),
 * would be read as something it is not: the parser reads the bytes as they
 * come. No embed compresses what it sends, and a compressed body would have
 * to be inflated past the body limit to be checked against it.
 */
export function refuseOtherCharsets(app: App): void {
  app.addHook('preParsing', async (request) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
      const shown = /^[A-Za-z0-9._, -]{1,40}$/.test(encoding) ? ` (got Content-Encoding: ${encoding})` : '';
      throw new AppError('unsupported_media_type', `The request body must be JSON in UTF-8, not compressed${shown}`);
    }
    // Node keeps the first of several Content-Type headers, where a proxy in front may have read another.
    if (headerCount(request.raw.rawHeaders, 'content-type') > 1) throw new AppError('unsupported_media_type', 'Send one Content-Type header: this request has several');
    // Every charset the type declares, not the first: one saying UTF-8 and another Latin-1 leaves what the bytes are a guess.
    for (const [name, declared] of parametersOf(request.headers['content-type'] ?? '')) {
      if (name !== 'charset' || UTF8.has(declared.toLowerCase())) continue;
      const shown = /^[A-Za-z0-9._-]{1,40}$/.test(declared) ? ` (got charset=${declared})` : '';
      throw new AppError('unsupported_media_type', `The request body must be JSON in UTF-8${shown}`);
    }
  });
}
