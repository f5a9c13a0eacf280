import { DEFINITION_LIMITS } from '../../src/embeddables/definition-limits.js';

/** A single-choice question of `choices` choices with labels of the longest length allowed. */
export const choiceQuestion = (id: string, choices = 50) => ({
  id,
  type: 'single_choice',
  title: `${id} `.padEnd(500, 'q'),
  required: false,
  choices: Array.from({ length: choices }, (_, i) => ({ id: `c${i}`, label: `${id}-${i} `.padEnd(200, 'x') })),
});

/**
 * A form body at the caps: every choice allowed (40 questions of 50, labels
 * of 200 characters), then text questions with 500-character titles until
 * the definition is within `slackBytes` of the size cap.
 */
export function largeFormBody(title = 'Large', slackBytes = 2048): { title: string; questions: object[] } {
  const questions: object[] = Array.from({ length: DEFINITION_LIMITS.choices / 50 }, (_, i) => choiceQuestion(`choice${i}`));
  const body = { title, questions };
  const room = () => DEFINITION_LIMITS.bytes - slackBytes - Buffer.byteLength(JSON.stringify(body)) - 1024;
  for (let i = 0; room() > 600 && questions.length < 200; i++) {
    questions.push({ id: `text${i}`, type: 'long_text', title: `text${i} `.padEnd(500, 't'), required: false });
  }
  return body;
}
