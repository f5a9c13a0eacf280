/**
 * A form with one question of every type, and answers to it as a visitor
 * sends them and as the service stores them (the phone number in E.164).
 */
const choices = (...ids: string[]) => ids.map((id) => ({ id, label: id[0]!.toUpperCase() + id.slice(1) }));

export const EVERY_TYPE = [
  { id: 'intro', type: 'statement', title: 'A few questions about your stay', description: 'It takes two minutes.' },
  { id: 'name', type: 'short_text', title: 'Your name', required: true, max_length: 100 },
  { id: 'story', type: 'long_text', title: 'Tell us about it' },
  { id: 'email', type: 'email', title: 'Email' },
  { id: 'phone', type: 'phone', title: 'Phone', default_country: 'GB' },
  { id: 'site', type: 'url', title: 'Your website' },
  { id: 'guests', type: 'number', title: 'Guests', min: 1, max: 12, integer: true },
  { id: 'arrival', type: 'date', title: 'Arrival', min: '2026-01-01', max: '2027-12-31' },
  { id: 'room', type: 'single_choice', title: 'Room', choices: choices('single', 'double', 'suite') },
  { id: 'floor', type: 'single_choice', title: 'Floor', choices: choices('low', 'high'), display: 'dropdown' },
  { id: 'extras', type: 'multiple_choice', title: 'Extras', choices: choices('breakfast', 'parking', 'late'), max_selected: 2 },
  { id: 'stars', type: 'star_rating', title: 'Stars', starRatingSettings: { maxStars: 5 } },
  { id: 'nps', type: 'nps', title: 'How likely are you to recommend us?' },
  { id: 'calm', type: 'opinion_scale', title: 'How calm was it?', start: 1, end: 7, start_label: 'Noisy', end_label: 'Calm' },
  { id: 'again', type: 'yes_no', title: 'Would you stay again?' },
  { id: 'order', type: 'ranking', title: 'Rank what matters most', choices: choices('price', 'location', 'quiet') },
  { id: 'grid', type: 'matrix', title: 'Rate each', rows: choices('staff', 'food'), columns: choices('poor', 'fine', 'great') },
  { id: 'bug', type: 'severity', title: 'How bad was the worst problem?' },
  { id: 'consent', type: 'consent', title: 'Consent', text: 'I agree that Acme Ltd may keep my answers for a year.' },
] as const;

/** What a visitor sends. */
export const SENT = {
  name: 'Ann Lee',
  story: 'Quiet, "lovely"; 10/10,\nwould return',
  email: 'ann@example.org',
  phone: '020 7946 0958',
  site: 'https://ann.example.org/blog?x=1',
  guests: 2,
  arrival: '2026-12-24',
  room: 'double',
  floor: 'high',
  extras: ['breakfast', 'late'],
  stars: 4,
  nps: 9,
  calm: 6,
  again: true,
  order: ['quiet', 'location', 'price'],
  grid: { staff: 'great', food: 'fine' },
  bug: 'low',
  consent: true,
};

/** What the service stores and shows. */
export const STORED = { ...SENT, phone: '+442079460958' };
