/**
 * The create/edit form of a widget, form or poll, with the real embed beside
 * it drawing the definition as it is typed (unsaved), in a frame of its own
 * so the embed's styles and the dashboard's stay apart as on a site.
 *
 * mountEditor(container, { kind, object?, api, onSaved?, base?, planLimits?, origin? })
 * - kind: 'widget' | 'form' | 'poll'; object: the owner's GET view when editing
 * - api(path, { method, body }): JSON in and out, path under /dashboard/api ('/widgets'); throws { status, code, message, details } on a refusal
 * - base: a prefix for those paths, for an api that takes whole ones ('')
 * - planLimits: the session's plan_limits (fetched from `${base}/session` when absent)
 * - origin: where site owners load the embed from, for the snippet (this page's origin)
 */

// What a new widget of each type asks: served from the service's own defaults (src/widgets/defaults.ts), never copied here.
import { WIDGET_DEFAULT_QUESTIONS } from './widget-defaults.js';
import { snippetOf } from './snippet.js';

const WIDGET_TYPES = [['feedback', 'Feedback'], ['nps', 'Net Promoter Score'], ['contact', 'Contact'], ['bug_report', 'Bug report'], ['custom', 'Custom']];
const QUESTION_TYPES = [
  ['star_rating', 'Star rating'],
  ['nps', 'NPS (0–10)'],
  ['short_text', 'Short text'],
  ['long_text', 'Long text'],
  ['email', 'Email address'],
  ['phone', 'Phone number'],
  ['url', 'Web address (URL)'],
  ['number', 'Number'],
  ['date', 'Date'],
  ['single_choice', 'Single choice'],
  ['multiple_choice', 'Multiple choice (checkboxes)'],
  ['opinion_scale', 'Opinion scale'],
  ['yes_no', 'Yes or no'],
  ['ranking', 'Ranking'],
  ['matrix', 'Matrix (rows × columns)'],
  ['statement', 'Statement (text, no answer)'],
  ['severity', 'Severity (low to critical)'],
  ['consent', 'Consent (forms only)'],
];
const TWO = [{ id: 'yes', label: 'Yes' }, { id: 'no', label: 'No' }];
// The languages the embed speaks: a translation in one of these is shown with its interface in the same language.
const LANGUAGE_NAMES = [['en', 'English'], ['de', 'German'], ['fr', 'French'], ['es', 'Spanish'], ['it', 'Italian'], ['pt', 'Portuguese'], ['nl', 'Dutch'], ['pl', 'Polish'], ['sv', 'Swedish'], ['da', 'Danish'], ['ja', 'Japanese'], ['zh', 'Chinese'], ['ko', 'Korean'], ['ar', 'Arabic'], ['he', 'Hebrew'], ['tr', 'Turkish'], ['ru', 'Russian'], ['uk', 'Ukrainian']];
const languageName = (code) => ((LANGUAGE_NAMES.find(([c]) => c === code) || [0, code])[1]);

/**
 * Every translatable text of a draft, in the translation's shape: [path, label, default text].
 * The path is a list of keys into one translation (`['questions', 'q1', 'choices', 'a']`).
 */
export function translatableOf(kind, draft) {
  const out = [];
  const add = (path, label, value) => { if (typeof value === 'string' && value.trim()) out.push([path, label, value]); };
  if (kind === 'poll') {
    add(['question'], 'Question', draft.question);
    draft.options.forEach((o, k) => { if (o.id) add(['options', o.id], `Option ${k + 1}`, o.text); });
    return out;
  }
  add(['title'], 'Title', draft.title);
  add(['description'], 'Description', draft.description);
  draft.questions.forEach((q, i) => {
    const at = (...rest) => ['questions', q.id, ...rest];
    const n = `Question ${i + 1}`;
    add(at('title'), `${n}: title`, q.title);
    add(at('description'), `${n}: description`, q.description);
    add(at('text'), `${n}: text`, q.text);
    add(at('start_label'), `${n}: start label`, q.start_label);
    add(at('end_label'), `${n}: end label`, q.end_label);
    for (const [key, noun] of [['choices', 'choice'], ['rows', 'row'], ['columns', 'column']]) {
      (q[key] || []).forEach((c, k) => add(at(key, c.id), `${n}: ${noun} ${k + 1}`, c.label));
    }
  });
  add(['thank_you_title'], 'Thank-you heading', draft.thank_you_title);
  add(['thank_you_message'], 'Thank-you message', draft.thank_you_message);
  (draft.endings || []).forEach((e, k) => {
    add(['endings', e.id, 'title'], `Ending ${k + 1}: heading`, e.title);
    add(['endings', e.id, 'message'], `Ending ${k + 1}: message`, e.message);
  });
  return out;
}
const valueAt = (tree, path) => path.reduce((node, key) => (node && typeof node === 'object' ? node[key] : undefined), tree);
/** Sets one text of a translation; an emptied text goes, and so does every object it leaves empty. */
function setAt(tree, path, value) {
  if (value) {
    let node = tree;
    for (const key of path.slice(0, -1)) node = node[key] && typeof node[key] === 'object' ? node[key] : (node[key] = {});
    node[path[path.length - 1]] = value;
    return;
  }
  const chain = [tree];
  for (const key of path.slice(0, -1)) { const next = chain[chain.length - 1][key]; if (!next || typeof next !== 'object') return; chain.push(next); }
  delete chain[chain.length - 1][path[path.length - 1]];
  for (let k = chain.length - 1; k > 0; k--) if (Object.keys(chain[k]).length === 0) delete chain[k - 1][path[k - 1]];
}

/** The settings a question of `type` starts with, keeping what `q` has that the type also takes. */
function typeDefaults(type, q = {}) {
  const out = {};
  if (type === 'star_rating') out.starRatingSettings = { maxStars: 5 };
  if (['single_choice', 'multiple_choice', 'ranking'].includes(type)) out.choices = q.choices || copy(TWO);
  if (type === 'consent') out.text = q.text || 'I agree that my answers are stored.';
  if (type === 'opinion_scale') Object.assign(out, { start: 1, end: 5 });
  if (type === 'matrix') Object.assign(out, { rows: q.rows || [{ id: 'row_1', label: 'Row 1' }], columns: q.columns || [{ id: 'poor', label: 'Poor' }, { id: 'good', label: 'Good' }] });
  if (q.description) out.description = q.description;
  return out;
}
const THEME = { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'light' };
const TRIGGER = { position: 'bottom-right', icon: 'feedback', text: 'Feedback', showText: true, triggerMode: 'click_toggle', scrollPercentage: 50, timeDelay: 5 };
const SETTINGS = { allowed_domains: [], closes_at: null, max_responses: null, rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null };
const THANKS = { title: 'Thank you!', message: 'We have received your feedback.' };

const copy = (value) => JSON.parse(JSON.stringify(value));

/** JSON with every object's keys in order, so the same definition reads the same whoever built it. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The editable definition: the owner's view, or what a new object starts as. */
function draftOf(kind, object) {
  if (kind === 'poll') {
    const o = object || {};
    return {
      question: o.question || '',
      options: copy(o.options || [{ text: '' }, { text: '' }]),
      allow_multiple: Boolean(o.allow_multiple),
      theme: { ...THEME, ...copy(o.theme || {}) },
      settings: { ...SETTINGS, ...copy(o.settings || {}) },
      language: o.language || 'en',
      translations: copy(o.translations || {}),
    };
  }
  const o = object || {};
  const draft = {
    title: o.title || '',
    description: o.description || '',
    questions: copy(o.questions || (kind === 'widget' ? WIDGET_DEFAULT_QUESTIONS.feedback : [])),
    theme: { ...THEME, ...copy(o.theme || {}) },
    thank_you_title: o.thank_you_title ?? THANKS.title,
    thank_you_message: o.thank_you_message ?? THANKS.message,
    settings: { ...SETTINGS, ...copy(o.settings || {}) },
    hidden_fields: copy(o.hidden_fields || []),
    redirect_url: o.redirect_url ?? null,
    language: o.language || 'en',
    translations: copy(o.translations || {}),
  };
  if (kind === 'form') {
    draft.presentation = o.presentation || 'all';
    draft.pages = copy(o.pages || []);
    draft.logic = copy(o.logic || []);
    draft.endings = copy(o.endings || []);
  }
  if (kind === 'widget') {
    draft.widget_type = o.widget_type || 'feedback';
    draft.trigger_config = { ...TRIGGER, ...copy(o.trigger_config || {}) };
  }
  return draft;
}

/** The create or update body, in the API's shapes. */
function bodyOf(kind, draft, creating, saved) {
  if (kind === 'poll') {
    return {
      question: draft.question,
      options: draft.options.map((o) => (o.id && !creating ? { id: o.id, text: o.text } : { text: o.text })),
      allow_multiple: draft.allow_multiple,
      theme: draft.theme,
      settings: draft.settings,
      language: draft.language,
      translations: draft.translations,
    };
  }
  const { widget_type, ...rest } = draft;
  // What the form does not use stays out of the body, unless the saved form had it and it is being taken away.
  const had = (key) => saved && saved[key] !== undefined && !(Array.isArray(saved[key]) && saved[key].length === 0);
  for (const key of ['pages', 'logic', 'endings']) if (rest[key] && rest[key].length === 0 && !had(key)) delete rest[key];
  if (rest.presentation === 'all' && !had('presentation')) delete rest.presentation;
  return kind === 'widget' && creating ? { widget_type, ...rest } : rest;
}

/** What the embed is handed: the definition as a GET would show it once saved. */
function previewOf(kind, draft, object) {
  const id = (object && object.id) || 'preview';
  if (kind === 'poll') return { id, question: draft.question, options: draft.options.map((o, i) => ({ id: o.id || `new-${i}`, text: o.text })), allow_multiple: draft.allow_multiple, theme: draft.theme, language: draft.language, translations: draft.translations };
  return { id, ...draft };
}

function h(tag, attrs, children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') el.textContent = v;
    else if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked' || k === 'disabled') el[k] = v;
    else if (v !== false && v != null) el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children || []) if (c != null && c !== false) el.append(c);
  return el;
}

/** A control's id from the path the server names it by in a validation error. */
const idOf = (path) => `ed-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/**
 * A new id for a question or choice, read from its words: `How did you hear
 * about us?` is `how_did_you_hear_about_us`, `Café` is `cafe`. Whole words up
 * to 48 characters, then `_2`, `_3`… to differ from the ids taken: always
 * within what the service takes (1–64 letters, digits, _ or -). Text with no
 * such letters gets the fallback.
 */
function freshId(text, taken, fallback = 'q') {
  const words = String(text || '').normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  let stem = '';
  for (const word of words) {
    const longer = stem ? `${stem}_${word}` : word;
    if (longer.length > 48) {
      stem = stem || word.slice(0, 48);
      break;
    }
    stem = longer;
  }
  stem = stem || fallback;
  let id = stem;
  for (let n = 2; taken.includes(id); n++) id = `${stem}_${n}`;
  return id;
}

/** A datetime-local value (the owner's time) from an instant, and back. */
function localOf(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
const instantOf = (local) => (local ? new Date(local).toISOString() : null);

/** A colour input holds #rrggbb only: other notations the API takes show as their nearest. */
function hexOf(colour, fallback) {
  return /^#[0-9a-f]{6}$/i.test(colour || '') ? colour : fallback;
}

export function mountEditor(container, options) {
  const { kind, api, onSaved } = options;
  const base = options.base ?? '';
  const origin = options.origin ?? location.origin;
  let object = options.object || null;
  let draft = draftOf(kind, object);
  let limits = options.planLimits || null;
  let screen = 'questions';
  // The language the preview shows: the object's own, or one of its translations.
  let previewLang = null;
  let ready = false;
  let queued = false;
  let busy = false;
  // The language picked to add survives a render (the session's plan limits arrive after the first one).
  let languageToAdd = null;
  // Questions and choices not saved yet: their ids follow their titles and labels until then (or until a key is typed by hand).
  // Ids name answers in responses and downloads, where `yes` for a choice now labelled `A friend` would mislead; a saved id never changes.
  const following = new WeakSet();
  /** Every question and choice of a new definition follows its text. */
  const follow = (questions) => {
    for (const q of questions) {
      following.add(q);
      for (const c of [...(q.choices || []), ...(q.rows || []), ...(q.columns || [])]) following.add(c);
    }
    return questions;
  };
  if (!object && kind !== 'poll') follow(draft.questions);
  // Questions whose type changed since the last save, with the key they were saved under.
  const retyped = new WeakMap();
  const savedQuestion = (id) => ((object && object.questions) || []).find((x) => x.id === id);
  /** Keys a new one must differ from: the other questions', and every saved one (answers were given under it, to its type, even if it is removed now). */
  const keysTaken = (questions, except) => [...questions.filter((x) => x !== except).map((x) => x.id), ...((object && object.questions) || []).map((x) => x.id)];
  /** Ids a new choice must differ from: its siblings', and those its question was saved with (answers name them). */
  const choicesTaken = (q, except) => {
    const saved = following.has(q) ? null : savedQuestion(retyped.get(q) ?? q.id);
    return [...q.choices.filter((c) => c !== except).map((c) => c.id), ...((saved && saved.choices) || []).map((c) => c.id)];
  };
  /** Questions under a saved key with another type than it was saved with (a key typed by hand): their answers would be counted together. */
  const keysOfAnotherType = () =>
    kind === 'poll'
      ? []
      : draft.questions.flatMap((q, i) => {
          const saved = savedQuestion(q.id);
          if (!saved || saved.type === q.type) return [];
          const name = (type) => ((QUESTION_TYPES.find(([t]) => t === type) || [0, type])[1]);
          return [{ path: `questions.${i}.id`, message: `${q.id} holds the answers given to a ${name(saved.type)} question: give this ${name(q.type)} question another key, or its type back` }];
        });
  const noun = kind === 'widget' ? 'widget' : kind === 'form' ? 'form' : 'poll';

  const summary = h('div', { class: 'editor-summary', role: 'alert', tabindex: '-1', hidden: true });
  const status = h('p', { class: 'editor-status', role: 'status' });
  const form = h('form', { class: 'editor-form', novalidate: true, 'aria-label': object ? `Edit the ${noun}` : `New ${noun}`, onsubmit: (e) => { e.preventDefault(); save(); } });
  const frame = h('iframe', { class: 'editor-frame', src: '/embed/preview', title: `Live preview of the ${noun}` });
  const screens = kind === 'poll' ? null : h('div', { class: 'editor-screens', role: 'group', 'aria-label': 'Screen to preview' }, [
    h('button', { type: 'button', 'data-screen': 'questions', 'aria-pressed': 'true', text: 'Questions', onclick: () => show('questions') }),
    h('button', { type: 'button', 'data-screen': 'thanks', 'aria-pressed': 'false', text: 'Thank-you screen', onclick: () => show('thanks') }),
  ]);
  const previewLanguage = h('select', { id: 'ed-preview-lang', onchange: (e) => { previewLang = e.target.value; schedule(); } });
  /** The preview's language choices: the object's own language and each translation. */
  function previewLanguages() {
    const codes = [draft.language, ...Object.keys(draft.translations).filter((c) => c !== draft.language)];
    if (!codes.includes(previewLang)) previewLang = draft.language;
    previewLanguage.replaceChildren(...codes.map((c) => h('option', { value: c, text: c === draft.language ? `${languageName(c)} (written in)` : languageName(c) })));
    previewLanguage.value = previewLang;
  }
  const pane = h('section', { class: 'editor-preview', 'aria-labelledby': 'editor-preview-title' }, [
    h('div', { class: 'editor-preview-head' }, [h('h2', { id: 'editor-preview-title', text: 'Live preview' }), screens]),
    h('div', { class: 'editor-field editor-preview-lang' }, [h('label', { for: 'ed-preview-lang', text: 'Preview in' }), previewLanguage]),
    h('p', { class: 'editor-hint', text: 'The embed as visitors will see it. Responses sent here are not recorded.' }),
    frame,
  ]);
  const root = h('div', { class: 'editor' }, [h('div', { class: 'editor-main' }, [summary, form]), pane]);
  container.replaceChildren(root);

  function show(which) {
    screen = which;
    for (const b of screens.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.screen === which));
    schedule();
  }

  // The frame says when it can draw; the latest definition goes to it then, and after every change.
  function onMessage(event) {
    // A page that replaced the editor without destroy() leaves no listener behind for long.
    if (!root.isConnected) return window.removeEventListener('message', onMessage);
    if (event.source !== frame.contentWindow || event.origin !== location.origin || !event.data || event.data.type !== 'feedback-preview-ready') return;
    ready = true;
    drawn = '';
    draw();
  }
  window.addEventListener('message', onMessage);
  // What the frame shows now: a save that changed nothing visible (a new object only gets its id) leaves the answers someone is trying out in place.
  let drawn = '';
  function draw() {
    queued = false;
    if (!ready || !frame.contentWindow) return;
    if (kind === 'form') syncPages();
    const shown = previewOf(kind, draft, object);
    const lang = previewLang && (previewLang === draft.language || draft.translations[previewLang]) ? previewLang : draft.language;
    const seen = canonical([{ ...shown, id: null }, screen, lang]);
    if (seen === drawn) return;
    drawn = seen;
    frame.contentWindow.postMessage({ type: 'feedback-preview', kind, object: shown, options: { screen, lang } }, location.origin);
  }
  function schedule() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(draw);
  }

  /* ---------- fields ---------- */

  /** A labelled control with a hint and a place for the server's word on it. */
  function field(label, path, control, hint) {
    control.id = idOf(path);
    control.dataset.path = path;
    const error = h('p', { class: 'editor-error', id: `${control.id}-error` });
    const hintEl = hint ? h('p', { class: 'editor-hint', id: `${control.id}-hint`, text: hint }) : null;
    control.setAttribute('aria-describedby', [hintEl && hintEl.id, error.id].filter(Boolean).join(' '));
    const inline = control.type === 'checkbox';
    return h('div', { class: inline ? 'editor-field editor-check' : 'editor-field' }, inline ? [control, h('label', { for: control.id, text: label }), hintEl, error] : [h('label', { for: control.id, text: label }), control, hintEl, error]);
  }
  function text(label, path, get, set, attrs = {}, hint) {
    const multiline = attrs.rows;
    const control = h(multiline ? 'textarea' : 'input', { type: multiline ? null : attrs.type || 'text', ...attrs, value: get() ?? '', oninput: (e) => { set(e.target.value); changed(); } });
    return field(label, path, control, hint);
  }
  function number(label, path, get, set, attrs = {}, hint) {
    const control = h('input', { type: 'number', inputmode: 'numeric', ...attrs, value: get() ?? '', oninput: (e) => { set(e.target.value === '' ? null : Number(e.target.value)); changed(); } });
    return field(label, path, control, hint);
  }
  function check(label, path, get, set, attrs = {}, hint) {
    const control = h('input', { type: 'checkbox', ...attrs, checked: Boolean(get()), onchange: (e) => { set(e.target.checked); changed(e.target.dataset.rebuild ? e.target : null); } });
    return field(label, path, control, hint);
  }
  function select(label, path, choices, get, set, attrs = {}, hint) {
    const control = h('select', { ...attrs, onchange: (e) => { set(e.target.value); changed(e.target.dataset.rebuild ? e.target : null); } }, choices.map(([value, name]) => h('option', { value, text: name })));
    control.value = get();
    return field(label, path, control, hint);
  }
  function colour(label, path, get, set, fallback) {
    const control = h('input', { type: 'color', value: hexOf(get(), fallback), oninput: (e) => { set(e.target.value); changed(); } });
    return field(label, path, control);
  }
  const section = (title, children, note) => h('fieldset', { class: 'editor-section' }, [h('legend', { text: title }), note ? h('p', { class: 'editor-hint', text: note }) : null, ...children]);
  const button = (label, onclick, attrs = {}) => h('button', { type: 'button', class: 'editor-button', text: label, onclick, ...attrs });

  /** A value changed: the preview follows; a change of shape (a type, a toggle with fields of its own) draws the form again. */
  function changed(rebuildFrom) {
    status.textContent = '';
    if (rebuildFrom) render(rebuildFrom.id);
    schedule();
  }

  /** Choices, rows or columns of a question: `{id, label}` rows to add, remove and reorder. */
  function optionsEditor(q, path, key, legend, noun, min, max) {
    const items = q[key];
    /** Ids a new option must differ from: its siblings', and for choices those its question was saved with (answers name them). */
    const taken = (except) => (key === 'choices' ? choicesTaken(q, except) : items.filter((o) => o !== except).map((o) => o.id));
    return listEditor({
      legend,
      path: `${path}.${key}`,
      items,
      label: (k) => `${noun} ${k + 1}`,
      get: (c) => c.label,
      set: (c, v) => { c.label = v; },
      field: 'label',
      make: () => ({ id: freshId('', taken(), `${noun.toLowerCase()}_${items.length + 1}`), label: '' }),
      min,
      max,
      // A new option's id follows its label until saved; a saved one keeps its id so its answers keep meaning.
      onText: (c, k) => { if (following.has(c)) c.id = freshId(c.label, taken(c), `${noun.toLowerCase()}_${k + 1}`); },
    });
  }

  /** The settings of one question type, beyond its choices: each optional one is absent when left empty. */
  function typeSettings(q, path) {
    const optional = (name) => (v) => { if (v === null || v === '') delete q[name]; else q[name] = v; };
    const num = (label, name, attrs, hint) => number(label, `${path}.${name}`, () => q[name], optional(name), attrs, hint);
    switch (q.type) {
      case 'short_text':
      case 'long_text':
        return [num('Longest answer (characters)', 'max_length', { min: '1', max: '10000' }, 'Empty: 10,000.')];
      case 'phone':
        return [text('Default country', `${path}.default_country`, () => q.default_country, (v) => optional('default_country')(v.trim().toUpperCase()), { maxlength: '2', spellcheck: 'false', autocomplete: 'off' }, 'Two letters, such as GB or US: numbers may then be typed without the country code.')];
      case 'number':
        return [num('Smallest', 'min', { step: 'any', inputmode: 'decimal' }), num('Largest', 'max', { step: 'any', inputmode: 'decimal' }), check('Whole numbers only', `${path}.integer`, () => q.integer, (v) => { if (v) q.integer = true; else delete q.integer; })];
      case 'date':
        return [
          text('Earliest', `${path}.min`, () => q.min, optional('min'), { type: 'date' }),
          text('Latest', `${path}.max`, () => q.max, optional('max'), { type: 'date' }),
        ];
      case 'single_choice':
        return [select('Shown as', `${path}.display`, [['', 'Buttons up to 6 choices, else a list'], ['radio', 'Buttons'], ['dropdown', 'A dropdown list']], () => q.display || '', optional('display'))];
      case 'multiple_choice':
        return [num('At least', 'min_selected', { min: '1' }, 'Empty: any number.'), num('At most', 'max_selected', { min: '1' })];
      case 'opinion_scale':
        return [
          select('From', `${path}.start`, [['0', '0'], ['1', '1']], () => String(q.start), (v) => { q.start = Number(v); }),
          number('To', `${path}.end`, () => q.end, (v) => { q.end = v ?? 5; }, { min: '2', max: '10' }),
          text('Label at the start', `${path}.start_label`, () => q.start_label, optional('start_label'), { maxlength: '100' }),
          text('Label at the end', `${path}.end_label`, () => q.end_label, optional('end_label'), { maxlength: '100' }),
        ];
      default:
        return [];
    }
  }

  function questionEditor(q, i, questions) {
    const path = `questions.${i}`;
    const n = i + 1;
    const parts = [
      select('Type', `${path}.type`, QUESTION_TYPES.filter(([t]) => kind === 'form' || t !== 'consent'), () => q.type, (type) => {
        // Answers already given under a saved key answered its saved type, and summaries count answers by key and value (a 4 of 5 stars
        // would count as an NPS of 4): another type asks a new question, under a new key. Back to the saved type, the saved key again.
        const key = retyped.get(q) ?? q.id;
        const saved = following.has(q) ? undefined : savedQuestion(key);
        const id = !saved || saved.type === type ? key : freshId(`${key}_${type}`, keysTaken(questions, q));
        const next = { id, type, title: q.title, required: type === 'statement' ? false : q.required, ...typeDefaults(type, q) };
        // Options the new type starts with follow their labels until saved, as a new question's do.
        for (const list of ['choices', 'rows', 'columns']) if (next[list] && next[list] !== q[list]) for (const c of next[list]) following.add(c);
        if (following.has(q)) following.add(next);
        else retyped.set(next, key);
        questions[i] = next;
      }, { 'data-rebuild': '1' }),
      text('Question', `${path}.title`, () => q.title, (v) => {
        q.title = v;
        if (!following.has(q)) return;
        q.id = freshId(v, keysTaken(questions, q), `question_${n}`);
        const key = document.getElementById(idOf(`${path}.id`));
        if (key) key.value = q.id;
      }, { maxlength: '500', required: true }),
      text('Answer key', `${path}.id`, () => q.id, (v) => { q.id = v; following.delete(q); }, { maxlength: '64', spellcheck: 'false', autocomplete: 'off' }, 'Names the answer in responses and downloads: letters, digits, _ or -. A new question\'s key follows its title until saved.'),
      q.type === 'statement' ? null : check('Required', `${path}.required`, () => q.required, (v) => { q.required = v; }),
      text('Description', `${path}.description`, () => q.description, (v) => { if (v) q.description = v; else delete q.description; }, { rows: '2', maxlength: '2000' }, 'Shown under the question. Optional.'),
      ...typeSettings(q, path),
      kind === 'form' ? showIfEditor(q, i) : null,
    ].filter(Boolean);
    if (q.type === 'star_rating') {
      parts.push(number('Number of stars', `${path}.starRatingSettings.maxStars`, () => q.starRatingSettings.maxStars, (v) => { q.starRatingSettings = { maxStars: v || 5 }; }, { min: '1', max: '10' }));
    }
    if (q.type === 'consent') parts.push(text('Consent text', `${path}.text`, () => q.text, (v) => { q.text = v; }, { rows: '3', maxlength: '5000' }));
    if (['single_choice', 'multiple_choice', 'ranking'].includes(q.type)) parts.push(optionsEditor(q, path, 'choices', 'Choices', 'Choice', 2, q.type === 'ranking' ? 20 : 50));
    if (q.type === 'matrix') parts.push(optionsEditor(q, path, 'rows', 'Rows', 'Row', 1, 20), optionsEditor(q, path, 'columns', 'Columns', 'Column', 2, 10));
    const moves = h('div', { class: 'editor-row' }, [
      button('Move up', () => move(questions, i, -1, 'question'), { disabled: i === 0, 'aria-label': `Move up: question ${n}`, id: `ed-question-${i}-up` }),
      button('Move down', () => move(questions, i, 1, 'question'), { disabled: i === questions.length - 1, 'aria-label': `Move down: question ${n}`, id: `ed-question-${i}-down` }),
      button('Remove', () => remove(questions, i, 'question'), { class: 'editor-button editor-danger', 'aria-label': `Remove: question ${n}` }),
    ]);
    return h('fieldset', { class: 'editor-item', 'data-path': path, id: idOf(path) }, [h('legend', { text: `Question ${n}` }), ...parts, h('p', { class: 'editor-error', id: `${idOf(path)}-error` }), moves]);
  }

  function move(list, i, by, what) {
    const [item] = list.splice(i, 1);
    list.splice(i + by, 0, item);
    const to = i + by;
    const edge = (by < 0 && to === 0) || (by > 0 && to === list.length - 1);
    // Focus stays with the moved item; at an edge its button is disabled, so the other one takes it.
    render(`ed-${what}-${to}-${(by < 0) !== edge ? 'up' : 'down'}`);
    schedule();
  }
  function remove(list, i, what) {
    list.splice(i, 1);
    render(`ed-add-${what}`);
    schedule();
  }

  /** Editable rows of text (choices, poll options): add, remove, reorder. */
  function listEditor({ legend, path, items, label, get, set, make, min, max, onText, field: key }) {
    const what = path.replace(/\W/g, '-');
    const rows = items.map((item, k) => {
      const input = text(label(k), `${path}.${k}.${key}`, () => get(item), (v) => { set(item, v); if (onText) onText(item, k); }, { maxlength: '200' });
      return h('div', { class: 'editor-list-row' }, [
        input,
        h('div', { class: 'editor-row' }, [
          button('Move up', () => move(items, k, -1, what), { disabled: k === 0, 'aria-label': `Move up: ${label(k).toLowerCase()}`, id: `ed-${what}-${k}-up` }),
          button('Move down', () => move(items, k, 1, what), { disabled: k === items.length - 1, 'aria-label': `Move down: ${label(k).toLowerCase()}`, id: `ed-${what}-${k}-down` }),
          button('Remove', () => remove(items, k, what), { class: 'editor-button editor-danger', disabled: items.length <= min, 'aria-label': `Remove: ${label(k).toLowerCase()}` }),
        ]),
      ]);
    });
    const add = button(`Add ${label(items.length).replace(/ \d+$/, '').toLowerCase()}`, () => {
      const item = make();
      following.add(item);
      items.push(item);
      render(idOf(`${path}.${items.length - 1}.${key}`));
      schedule();
    }, { id: `ed-add-${what}`, disabled: items.length >= max });
    return h('fieldset', { class: 'editor-list', id: idOf(path), 'data-path': path }, [h('legend', { text: legend }), ...rows, h('p', { class: 'editor-error', id: `${idOf(path)}-error` }), add]);
  }

  function questionsSection() {
    const questions = draft.questions;
    const typeSelect = h('select', { id: 'ed-new-question-type' }, QUESTION_TYPES.filter(([t]) => kind === 'form' || t !== 'consent').map(([v, n]) => h('option', { value: v, text: n })));
    typeSelect.value = 'short_text';
    const add = button('Add question', () => {
      const type = typeSelect.value;
      const q = { id: freshId('', keysTaken(questions), `question_${questions.length + 1}`), type, title: '', required: false, ...typeDefaults(type) };
      follow([q]);
      questions.push(q);
      render(idOf(`questions.${questions.length - 1}.title`));
      schedule();
    }, { id: 'ed-add-question' });
    return section('Questions', [
      h('div', { class: 'editor-items', id: idOf('questions'), 'data-path': 'questions' }, questions.map((q, i) => questionEditor(q, i, questions))),
      h('p', { class: 'editor-error', id: `${idOf('questions')}-error` }),
      questions.length === 0 ? h('p', { class: 'editor-hint', text: kind === 'widget' ? 'No questions: the widget asks its type\'s usual ones.' : 'No questions yet.' }) : null,
      h('div', { class: 'editor-row editor-add' }, [h('label', { for: typeSelect.id, text: 'New question type' }), typeSelect, add]),
    ]);
  }

  /* ---------- pages, conditions, jumps and endings (forms) ---------- */

  // Which page each question is on, by the question itself: a new question's key follows its title, its page stays.
  let placed;
  function placeAll() {
    placed = new WeakMap();
    for (const p of draft.pages || []) for (const id of p.question_ids) { const q = draft.questions.find((x) => x.id === id); if (q) placed.set(q, p); }
  }
  placeAll();
  /** Every question on one page (a new one on the last), each page's questions in the questions' order. */
  function syncPages() {
    if (!draft.pages || draft.pages.length === 0) return;
    for (const q of draft.questions) if (!draft.pages.includes(placed.get(q))) placed.set(q, draft.pages[draft.pages.length - 1]);
    for (const p of draft.pages) p.question_ids = draft.questions.filter((q) => placed.get(q) === p).map((q) => q.id);
  }
  const pageName = (p) => p.title || `Page ${draft.pages.indexOf(p) + 1}`;
  const questionName = (id) => { const q = draft.questions.find((x) => x.id === id); return q ? q.title || id : id; };
  const OPS = [['equals', 'is'], ['not_equals', 'is not'], ['contains', 'contains'], ['greater_than', 'is more than'], ['less_than', 'is less than'], ['answered', 'is answered'], ['not_answered', 'is not answered']];
  const NUMERIC = ['number', 'star_rating', 'nps', 'opinion_scale'];
  /** The operators that apply to a question of this type. */
  const opsFor = (type) => OPS.filter(([op]) => op === 'answered' || op === 'not_answered' || (op === 'contains' ? ['multiple_choice', 'short_text', 'long_text', 'email', 'url', 'phone'].includes(type) : op === 'greater_than' || op === 'less_than' ? NUMERIC.includes(type) || type === 'date' : type !== 'matrix'));
  /** A value as the owner reads it: a choice's label, yes or no. */
  function valueWords(c) {
    const q = draft.questions.find((x) => x.id === c.question);
    if (c.op === 'answered' || c.op === 'not_answered' || !q) return '';
    if (typeof c.value === 'boolean') return c.value ? 'Yes' : 'No';
    const choice = (q.choices || []).find((x) => x.id === c.value);
    return choice ? choice.label || choice.id : String(c.value ?? '');
  }
  const conditionWords = (c) => `${questionName(c.question)} ${(OPS.find(([op]) => op === c.op) || [0, c.op])[1]}${valueWords(c) ? ` ${valueWords(c)}` : ''}`;
  /** The value a condition starts with for a question: its first choice, yes, or nothing. */
  function startValue(q) {
    if (!q) return undefined;
    if (q.choices && q.choices.length) return q.choices[0].id;
    if (q.type === 'yes_no' || q.type === 'consent') return true;
    if (NUMERIC.includes(q.type)) return q.type === 'opinion_scale' ? q.start : q.type === 'nps' ? 0 : 1;
    if (q.type === 'date') return new Date().toISOString().slice(0, 10);
    return '';
  }

  /** A condition as three controls in a row: the question (among `among`), how it compares, and the value. */
  function conditionEditor(c, among, path, label) {
    const q = draft.questions.find((x) => x.id === c.question);
    const sentence = h('p', { class: 'editor-hint', 'aria-live': 'polite', text: '' });
    const parts = [
      select(`${label}: question`, `${path}.question`, among.map((x) => [x.id, x.title || x.id]), () => c.question, (v) => {
        c.question = v;
        const nq = draft.questions.find((x) => x.id === v);
        if (!opsFor(nq.type).some(([op]) => op === c.op)) c.op = opsFor(nq.type)[0][0];
        c.value = startValue(nq);
      }, { 'data-rebuild': '1' }),
      select(`${label}: comparison`, `${path}.op`, opsFor(q ? q.type : 'short_text'), () => c.op, (v) => { c.op = v; if (v === 'answered' || v === 'not_answered') delete c.value; else if (c.value === undefined) c.value = startValue(q); }, { 'data-rebuild': '1' }),
    ];
    if (q && c.op !== 'answered' && c.op !== 'not_answered') {
      if (q.choices) parts.push(select(`${label}: choice`, `${path}.value`, q.choices.map((x) => [x.id, x.label || x.id]), () => c.value, (v) => { c.value = v; }, { 'data-rebuild': '1' }));
      else if (q.type === 'yes_no' || q.type === 'consent') parts.push(select(`${label}: answer`, `${path}.value`, [['true', 'Yes'], ['false', 'No']], () => String(c.value), (v) => { c.value = v === 'true'; }, { 'data-rebuild': '1' }));
      else if (NUMERIC.includes(q.type)) parts.push(number(`${label}: number`, `${path}.value`, () => c.value, (v) => { c.value = v ?? 0; }));
      else parts.push(text(`${label}: value`, `${path}.value`, () => c.value, (v) => { c.value = v; }, { type: q.type === 'date' ? 'date' : 'text' }));
    }
    return { row: h('div', { class: 'editor-row' }, parts), sentence };
  }

  function showIfEditor(q, i) {
    const path = `questions.${i}.show_if`;
    const earlier = draft.questions.slice(0, i).filter((x) => x.type !== 'statement');
    if (earlier.length === 0) return null;
    const parts = [check('Show only when an earlier answer says so', `${path}.on`, () => q.show_if, (v) => {
      if (v) q.show_if = { question: earlier[earlier.length - 1].id, op: 'equals', value: startValue(earlier[earlier.length - 1]) };
      else delete q.show_if;
      if (v && !opsFor(earlier[earlier.length - 1].type).some(([op]) => op === 'equals')) q.show_if.op = 'answered';
    }, { 'data-rebuild': '1' })];
    if (q.show_if && q.show_if.question) {
      const c = conditionEditor(q.show_if, earlier, path, `Question ${i + 1} shows when`);
      c.sentence.textContent = `Shown only if ${conditionWords(q.show_if)}.`;
      parts.push(c.row, c.sentence);
    }
    return h('div', { class: 'editor-list' }, parts);
  }

  function pagesSection() {
    syncPages();
    const pages = draft.pages || [];
    const parts = [select('Presentation', 'presentation', [['all', 'A page at a time'], ['one_by_one', 'One question at a time (Enter to go on)']], () => draft.presentation || 'all', (v) => { draft.presentation = v; })];
    if (pages.length === 0) {
      parts.push(h('p', { class: 'editor-hint', text: 'All questions are on one page.' }), button('Split into pages', () => {
        draft.pages = [{ id: 'page_1', question_ids: [] }, { id: 'page_2', question_ids: [] }];
        for (const q of draft.questions) placed.set(q, draft.pages[0]);
        render(idOf('pages.0.title')); schedule();
      }, { id: 'ed-split-pages' }));
      return section('Pages and jumps', parts);
    }
    const targets = () => [...pages.map((p) => [p.id, pageName(p)]), ...draft.endings.map((e, k) => [e.id, `Ending: ${e.title || `Ending ${k + 1}`}`])];
    pages.forEach((p, k) => {
      const onIt = draft.questions.filter((q) => placed.get(q) === p);
      const readable = draft.questions.filter((q) => pages.indexOf(placed.get(q)) <= k && q.type !== 'statement');
      const rules = draft.logic.map((r, j) => [r, j]).filter(([r]) => r.page === p.id);
      const items = [
        text('Page title', `pages.${k}.title`, () => p.title, (v) => { if (v) p.title = v; else delete p.title; }, { maxlength: '200' }, 'Optional: shown above its questions.'),
        onIt.length ? h('ul', { class: 'editor-hint' }, onIt.map((q) => h('li', {}, [
          `${q.title || q.id} `,
          h('select', { 'aria-label': `Page of ${q.title || q.id}`, onchange: (e) => { placed.set(q, pages[Number(e.target.value)]); render(); schedule(); } },
            pages.map((x, m) => h('option', { value: String(m), text: pageName(x), ...(m === k ? { selected: true } : {}) }))),
        ]))) : h('p', { class: 'editor-hint', text: 'No questions on this page yet: move some here.' }),
      ];
      rules.forEach(([r, j]) => {
        const c = conditionEditor(r.if, readable, `logic.${j}.if`, `Jump ${j + 1}: if`);
        const to = select(`Jump ${j + 1}: go to`, `logic.${j}.go_to`, targets().filter(([id]) => pages.findIndex((x) => x.id === id) === -1 || pages.findIndex((x) => x.id === id) > k), () => r.go_to, (v) => { r.go_to = v; }, { 'data-rebuild': '1' });
        const target = pages.find((x) => x.id === r.go_to) || draft.endings.find((e) => e.id === r.go_to);
        c.sentence.textContent = `If ${conditionWords(r.if)}, go to ${target ? target.question_ids ? pageName(target) : target.title || r.go_to : r.go_to}.`;
        items.push(h('div', { class: 'editor-list', 'data-path': `logic.${j}`, id: idOf(`logic.${j}`) }, [c.row, to, c.sentence, h('p', { class: 'editor-error', id: `${idOf(`logic.${j}`)}-error` }),
          button('Remove jump', () => { draft.logic.splice(j, 1); render(); schedule(); }, { class: 'editor-button editor-danger', 'aria-label': `Remove jump ${j + 1}` })]));
      });
      const later = targets().filter(([id]) => pages.findIndex((x) => x.id === id) === -1 || pages.findIndex((x) => x.id === id) > k);
      items.push(h('div', { class: 'editor-row' }, [
        readable.length && later.length ? button('Add a jump', () => {
          // A question with choices makes the likeliest jump: the last one before, else the last question.
          const q = [...readable].reverse().find((x) => x.choices || x.type === 'yes_no') || readable[readable.length - 1];
          draft.logic.push({ page: p.id, if: { question: q.id, op: opsFor(q.type).some(([op]) => op === 'equals') ? 'equals' : 'answered', ...(startValue(q) !== undefined && opsFor(q.type).some(([op]) => op === 'equals') ? { value: startValue(q) } : {}) }, go_to: later[later.length > 1 && pages[k + 1] ? 1 : 0][0] });
          render(); schedule();
        }, { 'aria-label': `Add a jump after ${pageName(p)}` }) : null,
        button('Move up', () => { pages.splice(k - 1, 0, pages.splice(k, 1)[0]); render(); schedule(); }, { disabled: k === 0, 'aria-label': `Move up: ${pageName(p)}` }),
        button('Move down', () => { pages.splice(k + 1, 0, pages.splice(k, 1)[0]); render(); schedule(); }, { disabled: k === pages.length - 1, 'aria-label': `Move down: ${pageName(p)}` }),
        button('Remove page', () => {
          const to = pages[k - 1] || pages[k + 1];
          for (const q of onIt) placed.set(q, to);
          pages.splice(k, 1);
          draft.logic = draft.logic.filter((r) => r.page !== p.id && r.go_to !== p.id);
          if (pages.length < 2) draft.pages = [];
          render('ed-add-page'); schedule();
        }, { class: 'editor-button editor-danger', 'aria-label': `Remove page: ${pageName(p)}` }),
      ]));
      parts.push(h('fieldset', { class: 'editor-item', 'data-path': `pages.${k}`, id: idOf(`pages.${k}`) }, [h('legend', { text: pageName(p) }), ...items, h('p', { class: 'editor-error', id: `${idOf(`pages.${k}`)}-error` })]));
    });
    parts.push(h('div', { class: 'editor-row' }, [button('Add page', () => {
      let n = pages.length + 1;
      while (pages.some((p) => p.id === `page_${n}`)) n++;
      pages.push({ id: `page_${n}`, question_ids: [] });
      render(idOf(`pages.${pages.length - 1}.title`)); schedule();
    }, { id: 'ed-add-page' })]));
    return section('Pages and jumps', parts, 'After each page the first jump whose condition holds is taken; otherwise the next page, and after the last one the thank-you screen.');
  }

  function endingsSection() {
    const endings = draft.endings;
    const parts = endings.map((e, k) => h('fieldset', { class: 'editor-item', 'data-path': `endings.${k}`, id: idOf(`endings.${k}`) }, [
      h('legend', { text: `Ending ${k + 1}` }),
      text('Heading', `endings.${k}.title`, () => e.title, (v) => { e.title = v; }, { maxlength: '200' }),
      text('Message', `endings.${k}.message`, () => e.message, (v) => { e.message = v; }, { rows: '2', maxlength: '2000' }),
      text('Then go to', `endings.${k}.redirect_url`, () => e.redirect_url, (v) => { if (v.trim()) e.redirect_url = v.trim(); else delete e.redirect_url; }, { type: 'url', placeholder: 'https://' }, 'Optional: a page to send the visitor to instead.'),
      h('p', { class: 'editor-error', id: `${idOf(`endings.${k}`)}-error` }),
      button('Remove ending', () => { endings.splice(k, 1); draft.logic = draft.logic.filter((r) => r.go_to !== e.id); render('ed-add-ending'); schedule(); }, { class: 'editor-button editor-danger', 'aria-label': `Remove ending ${k + 1}` }),
    ]));
    parts.push(h('div', { class: 'editor-row' }, [button('Add ending', () => {
      let n = endings.length + 1;
      while (endings.some((e) => e.id === `ending_${n}`)) n++;
      endings.push({ id: `ending_${n}`, title: 'Thank you!', message: '' });
      render(`ed-endings-${endings.length - 1}-title`); schedule();
    }, { id: 'ed-add-ending' })]));
    return section('Other endings', parts, 'A jump can end the form on one of these instead of the thank-you screen.');
  }

  /** A setting the plan does not include stays visible, switched off, with the reason beside it. */
  function planNote(allowed, what) {
    return allowed ? null : `${what} is not part of your plan (${planName()}); Pro and Business include it.`;
  }
  const planName = () => {
    const plan = (limits && limits.plan) || 'free';
    return plan.charAt(0).toUpperCase() + plan.slice(1);
  };

  function settingsSection() {
    const s = draft.settings;
    const allowHoneypot = !limits || limits.honeypot !== false;
    const allowRate = !limits || limits.per_ip_rate_limit !== false;
    const parts = [
      text('Allowed sites', 'settings.allowed_domains', () => s.allowed_domains.join('\n'), (v) => { s.allowed_domains = v.split(/[\s,]+/).filter(Boolean); }, { rows: '3', spellcheck: 'false' }, 'One host name a line, such as example.com or *.example.com. Empty: any site may embed it.'),
      number('Most responses', 'settings.max_responses', () => s.max_responses, (v) => { s.max_responses = v; }, { min: '1' }, 'Closes after this many. Empty: no limit.'),
      text('Closes at', 'settings.closes_at', () => localOf(s.closes_at), (v) => { s.closes_at = instantOf(v); }, { type: 'datetime-local' }, 'In your time zone. Empty: stays open.'),
      kind === 'poll' ? null : text('Hidden fields', 'hidden_fields', () => draft.hidden_fields.join('\n'), (v) => { draft.hidden_fields = v.split(/[\s,]+/).filter(Boolean); }, { rows: '2', spellcheck: 'false' }, 'One name a line, such as utm_source: taken from the page address (?utm_source=…) or the tag\'s data-hidden-utm_source, and kept with each response.'),
      kind === 'poll' ? null : text('After sending, go to', 'redirect_url', () => draft.redirect_url, (v) => { draft.redirect_url = v.trim() || null; }, { type: 'url', spellcheck: 'false', placeholder: 'https://' }, 'Empty: the thank-you message. {{answer key}} or {{hidden field}} in it is replaced by the answer or value.'),
      kind === 'form' ? check('Keep unfinished responses', 'settings.keep_partial', () => s.keep_partial, (v) => { s.keep_partial = v; }, {}, 'Each page is kept as the visitor leaves it, so you see where visitors stop.') : null,
      check('One response per visitor', 'settings.prevent_duplicates', () => s.prevent_duplicates, (v) => { s.prevent_duplicates = v; }),
      number('Most per hour from one address and browser', 'settings.network_limit_per_hour', () => s.network_limit_per_hour, (v) => { s.network_limit_per_hour = v; }, { min: '1' }, 'Empty: no limit. Visitors behind one office or mobile network often share an address and a browser, so a low figure turns them away.'),
      check('Honeypot against bots', 'settings.honeypot', () => s.honeypot && allowHoneypot, (v) => { s.honeypot = v; }, { disabled: !allowHoneypot }, planNote(allowHoneypot, 'The honeypot')),
      check('Limit submissions per visitor address', 'settings.rate_limit', () => s.rate_limit !== null && allowRate, (v) => { s.rate_limit = v ? { max: 5, window_seconds: 3600 } : null; }, { disabled: !allowRate, 'data-rebuild': '1' }, planNote(allowRate, 'A rate limit per address')),
    ];
    if (s.rate_limit && allowRate) {
      parts.push(h('div', { class: 'editor-row' }, [
        number('At most', 'settings.rate_limit.max', () => s.rate_limit.max, (v) => { s.rate_limit.max = v; }, { min: '1' }),
        number('Per seconds', 'settings.rate_limit.window_seconds', () => s.rate_limit.window_seconds, (v) => { s.rate_limit.window_seconds = v; }, { min: '1', max: '86400' }),
      ]));
    }
    return section('Settings', parts);
  }

  function appearanceSection() {
    const t = draft.theme;
    const parts = [
      colour('Main colour', 'theme.primaryColor', () => t.primaryColor, (v) => { t.primaryColor = v; }, THEME.primaryColor),
      colour('Background', 'theme.backgroundColor', () => t.backgroundColor, (v) => { t.backgroundColor = v; }, THEME.backgroundColor),
      check('Pick a readable text colour for me', 'theme.text_color_auto', () => t.text_color === null, (v) => { t.text_color = v ? null : '#111827'; }, { 'data-rebuild': '1' }),
    ];
    if (t.text_color !== null) parts.push(colour('Text colour', 'theme.text_color', () => t.text_color, (v) => { t.text_color = v; }, '#111827'));
    parts.push(select('Colour scheme', 'theme.mode', [['light', 'Light: these colours'], ['dark', 'Dark'], ['auto', 'As the visitor\'s system']], () => t.mode, (v) => { t.mode = v; }));
    return section('Appearance', parts);
  }

  function launcherSection() {
    const c = draft.trigger_config;
    const parts = [
      select('Corner', 'trigger_config.position', [['bottom-right', 'Bottom right'], ['bottom-left', 'Bottom left'], ['top-right', 'Top right'], ['top-left', 'Top left']], () => c.position, (v) => { c.position = v; }),
      select('Icon', 'trigger_config.icon', [['feedback', 'Pencil'], ['chat', 'Speech bubble'], ['help', 'Question mark'], ['star', 'Star'], ['heart', 'Heart']], () => c.icon, (v) => { c.icon = v; }),
      text('Button text', 'trigger_config.text', () => c.text, (v) => { c.text = v; }, { maxlength: '60' }),
      check('Show the text beside the icon', 'trigger_config.showText', () => c.showText, (v) => { c.showText = v; }),
      select('Opens', 'trigger_config.triggerMode', [['click_toggle', 'When the visitor clicks it'], ['time_delay', 'After a delay'], ['scroll', 'After scrolling'], ['exit_intent', 'When the visitor is about to leave']], () => c.triggerMode, (v) => { c.triggerMode = v; }, { 'data-rebuild': '1' }),
    ];
    if (c.triggerMode === 'scroll') parts.push(number('Scrolled (%)', 'trigger_config.scrollPercentage', () => c.scrollPercentage, (v) => { c.scrollPercentage = v; }, { min: '0', max: '100' }));
    if (c.triggerMode === 'time_delay' || c.triggerMode === 'exit_intent') parts.push(number('Delay (seconds)', 'trigger_config.timeDelay', () => c.timeDelay, (v) => { c.timeDelay = v; }, { min: '0', max: '86400' }, c.triggerMode === 'exit_intent' ? 'On touch screens, which have no exit intent, it opens after this delay.' : null));
    return section('Launcher', parts, 'The preview shows the panel open; on a site it opens as set here.');
  }

  function basicsSection() {
    if (kind === 'poll') {
      return section('Poll', [
        text('Question', 'question', () => draft.question, (v) => { draft.question = v; }, { maxlength: '500', required: true }),
        listEditor({ legend: 'Options', path: 'options', items: draft.options, label: (k) => `Option ${k + 1}`, get: (o) => o.text, set: (o, v) => { o.text = v; }, field: 'text', make: () => ({ text: '' }), min: 2, max: 20 }),
        check('Voters may choose several options', 'allow_multiple', () => draft.allow_multiple, (v) => { draft.allow_multiple = v; }),
      ]);
    }
    const parts = [
      text('Title', 'title', () => draft.title, (v) => { draft.title = v; }, { maxlength: '200', required: true }),
      text('Description', 'description', () => draft.description, (v) => { draft.description = v; }, { rows: '2', maxlength: '2000' }, 'Shown above the questions. Optional.'),
    ];
    if (kind === 'widget') {
      parts.unshift(object
        ? h('p', { class: 'editor-hint', text: `Type: ${(WIDGET_TYPES.find(([t]) => t === draft.widget_type) || [0, draft.widget_type])[1]} (fixed when it was created)` })
        : select('Type', 'widget_type', WIDGET_TYPES, () => draft.widget_type, (v) => { draft.widget_type = v; draft.questions = follow(copy(WIDGET_DEFAULT_QUESTIONS[v])); }, { 'data-rebuild': '1' }, 'Each type starts with its usual questions.'));
    }
    return section(kind === 'widget' ? 'Widget' : 'Form', parts);
  }

  /** The object's language, and beside each of its texts an input per translation; a text not translated yet is marked. */
  function translationsSection() {
    const texts = translatableOf(kind, draft);
    const codes = Object.keys(draft.translations);
    const parts = [
      select('Written in', 'language', LANGUAGE_NAMES, () => draft.language, (v) => { draft.language = v; }, { 'data-rebuild': '1' }, 'The language of the texts above; visitors whose language has no translation see these.'),
    ];
    for (const code of codes) {
      const t = draft.translations[code];
      const legendId = `ed-tr-${code}-legend`;
      const rows = texts.map(([path, label, original]) => {
        const id = idOf(`translations.${code}.${path.join('.')}`);
        const absent = !valueAt(t, path);
        const note = h('span', { class: 'editor-missing', id: `${id}-missing`, text: absent ? 'Missing' : '', hidden: !absent });
        const long = original.length > 80;
        const control = h(long ? 'textarea' : 'input', {
          type: long ? null : 'text', id, rows: long ? '2' : null, lang: code, value: valueAt(t, path) || '', 'data-path': `translations.${code}.${path.join('.')}`,
          'aria-describedby': `${id}-original ${id}-missing`,
          oninput: (e) => {
            setAt(t, path, e.target.value.trim() ? e.target.value : '');
            const empty = !e.target.value.trim();
            note.hidden = !empty;
            note.textContent = empty ? 'Missing' : '';
            row.classList.toggle('editor-untranslated', empty);
            count.textContent = countText();
            changed();
          },
        });
        const row = h('div', { class: absent ? 'editor-field editor-translation editor-untranslated' : 'editor-field editor-translation' }, [
          h('label', { for: id, text: `${label} (${languageName(code)})` }),
          h('p', { class: 'editor-original', id: `${id}-original`, lang: draft.language, text: original }),
          control,
          note,
          h('p', { class: 'editor-error', id: `${id}-error` }),
        ]);
        return row;
      });
      const countText = () => {
        const n = texts.filter(([path]) => !valueAt(t, path)).length;
        return n === 0 ? 'Every text is translated.' : `${n} of ${texts.length} texts not translated yet: visitors see those in ${languageName(draft.language)}.`;
      };
      const count = h('p', { class: 'editor-hint', id: `ed-tr-${code}-count`, text: countText() });
      parts.push(h('fieldset', { class: 'editor-item', id: idOf(`translations.${code}`), 'data-path': `translations.${code}`, 'aria-labelledby': legendId }, [
        h('legend', { id: legendId, text: languageName(code) }),
        count,
        ...rows,
        h('p', { class: 'editor-error', id: `${idOf(`translations.${code}`)}-error` }),
        button(`Remove ${languageName(code)}`, () => { delete draft.translations[code]; previewLanguages(); render('ed-add-language'); schedule(); }, { class: 'editor-button editor-danger', id: `ed-remove-${code}` }),
      ]));
    }
    const free = LANGUAGE_NAMES.filter(([c]) => c !== draft.language && !codes.includes(c));
    if (free.length) {
      const pick = h('select', { id: 'ed-new-language', 'aria-label': 'Language to add', onchange: (e) => { languageToAdd = e.target.value; } }, free.map(([value, name]) => h('option', { value, text: name })));
      if (free.some(([c]) => c === languageToAdd)) pick.value = languageToAdd;
      parts.push(h('div', { class: 'editor-row' }, [pick, button('Add language', () => {
        languageToAdd = null;
        draft.translations[pick.value] = {};
        previewLanguages();
        render(idOf(`translations.${pick.value}.${(texts[0] || [['title']])[0].join('.')}`));
        schedule();
      }, { id: 'ed-add-language' })]));
    }
    return section('Languages', parts, 'Visitors see the translation in their language (their browser\'s, the site\'s or the one the snippet names); the answers of every language are counted together.');
  }

  function thanksSection() {
    return section('Thank-you screen', [
      text('Heading', 'thank_you_title', () => draft.thank_you_title, (v) => { draft.thank_you_title = v; }, { maxlength: '200' }),
      text('Message', 'thank_you_message', () => draft.thank_you_message, (v) => { draft.thank_you_message = v; }, { rows: '2', maxlength: '2000' }),
    ]);
  }

  function snippetSection() {
    if (!object) return null;
    let code = snippetOf(origin, kind, object.id);
    const box = h('textarea', { id: 'ed-snippet', class: 'editor-code', readonly: true, rows: '2', spellcheck: 'false', value: code, onfocus: (e) => e.target.select() });
    // A form's or poll's container holds the space the service works out from the saved definition.
    if (kind !== 'widget') {
      api(`${base}/${kind}s/${encodeURIComponent(object.id)}/share`, { method: 'GET' }).then((share) => {
        code = box.value = snippetOf(origin, kind, object.id, share.min_height.css);
      }, () => { /* the snippet without the height still works */ });
    }
    const said = h('p', { class: 'editor-status', role: 'status', id: 'ed-snippet-status' });
    const copyButton = button('Copy the snippet', async () => {
      try {
        await navigator.clipboard.writeText(code);
        said.textContent = 'Copied. Paste it into your site\'s HTML where the embed should load.';
      } catch {
        box.focus();
        box.select();
        said.textContent = 'Copying was not allowed here: the code is selected, press Ctrl+C (⌘C on a Mac) to copy it.';
      }
    }, { id: 'ed-copy' });
    return section('Add it to your site', [
      h('label', { for: box.id, text: 'Embed code' }),
      box,
      h('div', { class: 'editor-row' }, [copyButton]),
      said,
    ], object.published ? null : 'It shows on your site once published.');
  }

  function actions() {
    const widgetsBlocked = kind === 'widget' && !object && limits && limits.create_widgets === false;
    const parts = [
      h('button', { type: 'submit', class: 'editor-button editor-primary', id: 'ed-save', text: object ? 'Save changes' : `Create ${noun}`, disabled: widgetsBlocked || busy }),
    ];
    if (object) {
      parts.push(button(object.published ? 'Unpublish' : 'Publish', () => save({ published: !object.published }), { id: 'ed-publish', disabled: busy }));
      parts.push(h('span', { class: object.published ? 'editor-badge editor-live' : 'editor-badge', text: object.published ? 'Published' : 'Draft' }));
    }
    return h('div', { class: 'editor-actions' }, [
      h('div', { class: 'editor-row' }, parts),
      widgetsBlocked ? h('p', { class: 'editor-hint', text: `Widgets are not part of your plan (${planName()}); Pro and Business include them. Forms and polls are.` }) : null,
      status,
    ]);
  }

  /** Draws the form again, focus back where it was (or on the given control). */
  function render(focusId) {
    const active = focusId || (document.activeElement && form.contains(document.activeElement) ? document.activeElement.id : null);
    const sections = kind === 'poll'
      ? [basicsSection(), translationsSection(), appearanceSection(), settingsSection()]
      : [basicsSection(), questionsSection(), kind === 'form' ? pagesSection() : null, kind === 'widget' ? launcherSection() : null, appearanceSection(), thanksSection(), kind === 'form' ? endingsSection() : null, translationsSection(), settingsSection()];
    previewLanguages();
    form.replaceChildren(...sections.filter(Boolean), actions(), ...[snippetSection()].filter(Boolean));
    if (active) {
      const el = document.getElementById(active);
      if (el && !el.disabled) el.focus();
    }
  }

  /* ---------- saving ---------- */

  function clearErrors() {
    summary.hidden = true;
    summary.replaceChildren();
    for (const el of form.querySelectorAll('.editor-error')) el.textContent = '';
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  }

  /** Each detail beside the field its path names (or the nearest enclosing one); the rest, and a count, in the summary. */
  function showErrors(error) {
    const details = (error && error.details) || [];
    const unplaced = [];
    let first = null;
    for (const d of details) {
      const parts = String(d.path || '').replace(/^body\.?/, '').split('.').filter(Boolean);
      let target = null;
      for (let n = parts.length; n > 0 && !target; n--) target = form.querySelector(`[data-path="${parts.slice(0, n).join('.')}"]`);
      if (!target) { unplaced.push(`${parts.join('.') || 'body'}: ${d.message}`); continue; }
      const slot = document.getElementById(`${target.id}-error`);
      if (slot) slot.textContent = slot.textContent ? `${slot.textContent}; ${d.message}` : capital(d.message);
      target.setAttribute('aria-invalid', 'true');
      first = first || target;
    }
    const lines = [h('p', { text: details.length ? `Not saved: ${details.length === 1 ? 'one field needs' : `${details.length} fields need`} a change.` : `Not saved: ${(error && error.message) || 'the server could not be reached.'}` })];
    if (unplaced.length) lines.push(h('ul', {}, unplaced.map((u) => h('li', { text: u }))));
    summary.replaceChildren(...lines);
    summary.hidden = false;
    (first && first.matches('input,select,textarea') ? first : first ? first.querySelector('input,select,textarea,button') || summary : summary).focus();
  }
  const capital = (m) => m.charAt(0).toUpperCase() + m.slice(1);

  async function save(extra) {
    if (busy) return;
    clearErrors();
    const mixed = keysOfAnotherType();
    if (mixed.length) {
      status.textContent = '';
      showErrors({ details: mixed });
      return;
    }
    busy = true;
    if (kind === 'form') syncPages();
    status.textContent = 'Saving…';
    const focused = document.activeElement && document.activeElement.id;
    try {
      let id = object && object.id;
      if (!id) {
        const created = await api(`${base}/${kind}s`, { method: 'POST', body: bodyOf(kind, draft, true) });
        id = created.id;
      } else {
        await api(`${base}/${kind}s/${encodeURIComponent(id)}`, { method: 'PUT', body: { ...bodyOf(kind, draft, false, object), ...(extra || {}) } });
      }
      object = await api(`${base}/${kind}s/${encodeURIComponent(id)}`, { method: 'GET' });
      draft = draftOf(kind, object);
      if (kind === 'form') placeAll();
      busy = false;
      render(focused);
      status.textContent = extra && 'published' in extra ? (object.published ? 'Published: it shows on sites that have its snippet.' : 'Unpublished: sites no longer show it.') : 'Saved.';
      schedule();
      if (onSaved) onSaved(object);
    } catch (error) {
      busy = false;
      render(focused);
      status.textContent = '';
      showErrors(error);
    }
  }

  render();
  if (!limits) {
    Promise.resolve()
      .then(() => api(`${base}/session`, { method: 'GET' }))
      .then((session) => {
        limits = { ...session.plan_limits, plan: session.account && session.account.plan };
        render();
      })
      .catch(() => { /* without the session's limits nothing is switched off; the server still refuses what the plan lacks */ });
  }

  return {
    /** The definition as it stands, unsaved changes included. */
    get definition() { return previewOf(kind, draft, object); },
    destroy() { window.removeEventListener('message', onMessage); container.replaceChildren(); },
  };
}
