import type { WidgetQuestion } from '../embeddables/questions.js';
import type { WidgetType } from './schemas.js';

/** What a widget asks when its owner gives no questions: the usual shape of each type. */
export const DEFAULT_QUESTIONS: Record<WidgetType, WidgetQuestion[]> = {
  feedback: [
    { id: 'rating', type: 'star_rating', title: 'How would you rate your experience?', required: true, starRatingSettings: { maxStars: 5 } },
    { id: 'comment', type: 'long_text', title: 'Anything else you would like to tell us?', required: false },
  ],
  nps: [
    { id: 'score', type: 'nps', title: 'How likely are you to recommend us to a friend or colleague?', required: true },
    { id: 'reason', type: 'long_text', title: 'What is the main reason for your score?', required: false },
  ],
  contact: [
    { id: 'email', type: 'email', title: 'Your email address', required: true },
    { id: 'message', type: 'long_text', title: 'Your message', required: true },
  ],
  bug_report: [
    { id: 'description', type: 'long_text', title: 'What went wrong?', required: true },
    { id: 'severity', type: 'severity', title: 'How bad is it?', required: true },
  ],
  custom: [],
};

export const DEFAULT_THANK_YOU = { title: 'Thank you!', message: 'We have received your feedback.' };
