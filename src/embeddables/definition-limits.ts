import type { ErrorDetail } from '../kernel/errors.js';

/**
 * Caps on a whole widget or form definition, beyond the limits of each
 * field: one definition is loaded whole by every submission and held in the
 * state cache, so its weight is what one tenant can make every request of
 * theirs cost the server. Real forms are a small fraction of these.
 */
export const DEFINITION_LIMITS = {
  /** The definition (presentation, questions, settings) as UTF-8 JSON. */
  bytes: 512 * 1024,
  /** Choices of all its questions together (each question holds at most 50). */
  choices: 2_000,
} as const;

interface Definition {
  questions: ReadonlyArray<{ type: string; choices?: readonly unknown[] }>;
}

const measure = (definition: Definition) => ({
  bytes: Buffer.byteLength(JSON.stringify(definition)),
  choices: definition.questions.reduce((sum, question) => sum + (question.choices?.length ?? 0), 0),
});

/**
 * The caps `next` breaks, as error details; none when it fits. With the
 * stored definition as `previous`, a cap it broke already (stored under
 * looser caps of its day) is held against a change only when the change
 * makes that measure larger still: a tightened cap must not block every edit.
 */
export function definitionOverLimits(next: Definition, previous?: Definition): ErrorDetail[] {
  const now = measure(next);
  const before = previous ? measure(previous) : { bytes: 0, choices: 0 };
  const details: ErrorDetail[] = [];
  if (now.bytes > DEFINITION_LIMITS.bytes && now.bytes > before.bytes) {
    details.push({ path: 'body', message: `the definition must be at most ${DEFINITION_LIMITS.bytes / 1024} KiB as JSON; this one is ${Math.ceil(now.bytes / 1024)} KiB` });
  }
  if (now.choices > DEFINITION_LIMITS.choices && now.choices > before.choices) {
    details.push({ path: 'body.questions', message: `must hold at most ${DEFINITION_LIMITS.choices} choices in all; these hold ${now.choices}` });
  }
  return details;
}

/** The caps as the API reference states them, for the OpenAPI description of each route that takes a definition. */
export const DEFINITION_LIMITS_TEXT = `A definition holds at most ${DEFINITION_LIMITS.choices.toLocaleString('en')} choices over all its questions and weighs at most ${DEFINITION_LIMITS.bytes / 1024} KiB as UTF-8 JSON (presentation, questions and settings); past either it is 400 \`validation_error\`, the details naming what is over.`;
