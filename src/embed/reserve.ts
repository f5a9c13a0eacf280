/**
 * The height an inline form or poll will take on the page, worked out from
 * its definition before any script runs, so that the container a site owner
 * pastes can hold that space and nothing after it moves when the embed draws
 * (a layout shift, which Core Web Vitals count against the page).
 *
 * It mirrors the embed's own stylesheet (src/embed/embed.js): 16 px text at
 * line height 1.5, 18 px headings at 1.3, 44 px controls, 18 px padding and a
 * 560 px maximum width. Text is wrapped word by word at a character width
 * taken from the widest common system font (DejaVu Sans), so the estimate
 * errs on the tall side: a few pixels of space under the embed, never a
 * shift. Only the first screen counts: what follows it (errors, a next page,
 * the thank-you card, results after a vote) comes in answer to the visitor,
 * which Core Web Vitals excuse.
 */

/** The inline embed's widest box and what its border and padding take from it. */
const MAX_WIDTH = 560;
const FRAME = 2 + 36;
const BODY_PADDING = 18 + 18;
/** The viewport widths of the two estimates: a small phone and the width from which the embed is at its widest. */
export const PHONE_VIEWPORT = 360;
export const DESKTOP_VIEWPORT = 640;
/** What a host page's margins are taken to leave of a phone's width. */
const PHONE_MARGINS = 32;

const CONTROL = 44;
const TEXT_LINE = 24;
const HEADING_LINE = 23.4;
const QUESTION_GAP = 16;
const LABEL_GAP = 6;

/** Average character widths in px (DejaVu Sans at 16 px: regular, semibold labels; 18 px bold headings). */
const CHAR = { text: 8.9, label: 10, heading: 11.3 };

export interface ReservedHeights {
  /** At the widest (a desktop). */
  desktop: number;
  /** On a phone 360 px wide. */
  phone: number;
}

/** Lines a text takes at a width, wrapped between words (a word longer than a line breaks anywhere, as the embed lets it). */
export function lines(text: string, width: number, charWidth: number): number {
  const perLine = Math.max(1, Math.floor(width / charWidth));
  let count = 0;
  for (const paragraph of text.split('\n')) {
    let used = 0;
    let inParagraph = 1;
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      const length = [...word].length;
      const needed = used === 0 ? length : used + 1 + length;
      if (needed <= perLine) used = needed;
      else {
        inParagraph += used === 0 ? 0 : 1;
        inParagraph += Math.ceil(length / perLine) - 1;
        used = length % perLine || perLine;
      }
    }
    count += inParagraph;
  }
  return count;
}

interface Question {
  id: string;
  type: string;
  title: string;
  description?: string;
  text?: string;
}

const label = (q: Question, width: number) => lines(q.title, width, CHAR.label) * TEXT_LINE + LABEL_GAP;

/**
 * The control under a question's label, by type. A type not listed here is
 * taken as one control row, as most are; a type taller than that (a list of
 * choices, a grid) gets its own line.
 */
const CONTROLS: Record<string, (q: Question, width: number) => number> = {
  long_text: () => 3 * TEXT_LINE + 18 + 2,
  nps: () => CONTROL + 4 + 21,
  consent: (q, width) => Math.max(CONTROL, 20 + lines(q.text ?? '', width - 34, CHAR.text) * TEXT_LINE),
};

function questionHeight(q: Question, width: number): number {
  const control = CONTROLS[q.type]?.(q, width) ?? CONTROL;
  const described = q.description ? lines(q.description, width, CHAR.text) * TEXT_LINE : 0;
  return label(q, width) + described + control + QUESTION_GAP;
}

export interface FormShape {
  title: string;
  description: string;
  questions: Question[];
  /** Forms with pages show the first one first. */
  pages?: Array<{ question_ids: string[]; title?: string }>;
  presentation?: string;
}

export interface PollShape {
  question: string;
  options: Array<{ text: string }>;
}

/**
 * A form of several pages, or one question at a time, starts with a progress
 * bar (4 px above, 8 px high); a page with a title, or one of several, with
 * its heading (12 px above and below). One question at a time shows fewer
 * questions than the page holds: counted all, the estimate errs tall.
 */
function pagingHeight(form: FormShape, width: number): number {
  const pages = form.pages ?? [];
  const bar = pages.length > 1 || form.presentation === 'one_by_one' ? 12 : 0;
  const title = pages[0]?.title || (pages.length > 1 ? `Page 1 of ${pages.length}` : '');
  return bar + (title ? 24 + lines(title, width, CHAR.label) * TEXT_LINE : 0);
}

function formHeight(form: FormShape, width: number): number {
  const first = form.pages?.[0] ? new Set(form.pages[0].question_ids) : null;
  const questions = first ? form.questions.filter((q) => first.has(q.id)) : form.questions;
  const title = lines(form.title, width, CHAR.heading) * HEADING_LINE + 4;
  const description = form.description ? lines(form.description, width, CHAR.text) * TEXT_LINE + 12 : 0;
  return title + description + pagingHeight(form, width) + questions.reduce((sum, q) => sum + questionHeight(q, width), 0) + CONTROL;
}

/** The ballot, or the results a visitor who voted before sees at once: whichever is taller. */
function pollHeight(poll: PollShape, width: number): number {
  const option = (text: string, room: number) => Math.max(CONTROL, 20 + lines(text, room, CHAR.text) * TEXT_LINE);
  const ballot = lines(poll.question, width, CHAR.label) * TEXT_LINE + LABEL_GAP + poll.options.reduce((sum, o) => sum + option(o.text, width - 34), 0) + QUESTION_GAP + 2 * CONTROL;
  const results =
    lines(poll.question, width, CHAR.heading) * HEADING_LINE + 4 + TEXT_LINE + 12 +
    poll.options.reduce((sum, o) => sum + lines(`${o.text} — 10000 votes (100%)`, width, CHAR.text) * TEXT_LINE + 12 + QUESTION_GAP, 0);
  return Math.max(ballot, results);
}

/** The heights of an inline form or poll's first screen, at a desktop's width and a phone's, in whole px. */
export function reservedHeights(kind: 'form', object: FormShape): ReservedHeights;
export function reservedHeights(kind: 'poll', object: PollShape): ReservedHeights;
export function reservedHeights(kind: 'form' | 'poll', object: FormShape | PollShape): ReservedHeights {
  const at = (width: number) => Math.ceil(2 + BODY_PADDING + (kind === 'form' ? formHeight(object as FormShape, width) : pollHeight(object as PollShape, width)));
  return { desktop: at(MAX_WIDTH - FRAME), phone: at(PHONE_VIEWPORT - PHONE_MARGINS - FRAME) };
}

/**
 * One CSS `min-height` for every width: the phone's height up to 360 px, the
 * desktop's from 640 px, a straight line between. Text wraps into more lines
 * as the width shrinks, by less than a straight line says, so between the two
 * the line stays above what the embed needs.
 */
export function minHeightCss({ desktop, phone }: ReservedHeights): string {
  if (phone <= desktop) return `${desktop}px`;
  const slope = (phone - desktop) / (DESKTOP_VIEWPORT - PHONE_VIEWPORT);
  return `clamp(${desktop}px, calc(${phone}px - (100vw - ${PHONE_VIEWPORT}px) * ${Number(slope.toFixed(4))}), ${phone}px)`;
}
