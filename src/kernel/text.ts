import { z } from 'zod';

/**
 * C0 controls but TAB, LF and CR (text people type may hold those), DEL and
 * C1 (which holds the 8-bit ESC and CSI): none belongs in text shown to
 * people, and some rewrite a terminal or a log viewer that shows them.
 */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
/** Half of a UTF-16 pair without its other half: not a character, and no UTF-8 encoding exists for it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const STRIPPED = new RegExp(`${CONTROL.source}|[\\t\\n\\r]|${LONE_SURROGATE.source}`, 'g');
/** Either problem, in one look: most texts have neither, and every string of every request is looked at. */
const ANY_PROBLEM = new RegExp(`${CONTROL.source}|${LONE_SURROGATE.source}`);
const ANY_STRIPPED = new RegExp(STRIPPED.source);

/**
 * A JSON text with no escape sequence and no control character or unpaired
 * surrogate anywhere: every string and key it holds is then exactly as
 * written, and clean (JSON allows raw only tab, line feed and carriage
 * return, outside strings). One look at the whole text, instead of one at
 * each of its strings once parsed.
 */
export function cleanJsonText(text: string): boolean {
  return !text.includes('\\') && !ANY_PROBLEM.test(text);
}

/** What is wrong with a text, if anything. */
export function textProblem(value: string): string | undefined {
  if (!ANY_PROBLEM.test(value)) return undefined;
  if (CONTROL.test(value)) return 'contains a control character (only tab, line feed and carriage return are allowed)';
  if (LONE_SURROGATE.test(value)) return 'contains an unpaired surrogate, which is not a character';
  return undefined;
}

/** Page facts an embed collects are one line each: every control character goes, tab and line breaks too. */
export function stripControls(value: string): string {
  return ANY_STRIPPED.test(value) ? value.replace(STRIPPED, '') : value;
}

/**
 * Nothing but white space and characters that show nothing by themselves:
 * format characters (zero-width space and joiners, soft hyphen, byte order
 * mark, direction marks), the Hangul fillers and the blank Braille pattern,
 * which pass for a letter yet leave the line empty.
 */
const INVISIBLE = /^[\s\p{Cf}\u115F\u1160\u2800\u3164\uFFA0]*$/u;

/** Whether a text shows anything to a reader. */
export const shows = (value: string): boolean => !INVISIBLE.test(value);

/** A text that must say something: trimmed, then neither empty nor only invisible characters, and at most `max` characters. */
export const said = (max: number) => z.string().trim().min(1, 'must not be blank').max(max).refine(shows, 'must not be blank');
