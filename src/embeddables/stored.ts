/**
 * Stored shapes that the events of widgets, forms and polls share, frozen as
 * every event shape is (see the top of each feature's events.ts): a change
 * here is a new version of every event that uses it, with an upcaster.
 */
import { z } from 'zod';
import type { JsonObject } from '../infra/event-store/port.js';

/** Version 3 of the events that hold a theme added `text_color` (null: picked by the embed) and `mode`. */
export const Theme = z.object({
  primaryColor: z.string(),
  backgroundColor: z.string(),
  text_color: z.string().nullable(),
  mode: z.enum(['light', 'dark', 'auto']),
});

export const Settings = z.object({
  allowed_domains: z.array(z.string()),
  closes_at: z.string().nullable(),
  max_responses: z.number().int().nullable(),
  rate_limit: z.object({ max: z.number().int(), window_seconds: z.number().int() }).nullable(),
  honeypot: z.boolean(),
  prevent_duplicates: z.boolean(),
  network_limit_per_hour: z.number().int().nullable(),
});

const question = { id: z.string(), title: z.string(), required: z.boolean(), description: z.string().optional() };
const options = z.array(z.object({ id: z.string(), label: z.string() }));

/** The settings of forms and polls from versions 5 and 4 of their events: they have a hosted page. */
export const PageSettings = Settings.extend({ indexable: z.boolean() });


/**
 * The question types widgets and forms both store; forms add `consent`.
 * Version 4 of their events added `description` to every question, settings
 * to the text types and single choice, and the types from `phone` to
 * `statement`: a superset, so every question stored before reads as it was.
 */
const typesOn = <B extends z.ZodRawShape>(question: B) =>
  [
    z.object({ ...question, type: z.literal('star_rating'), starRatingSettings: z.object({ maxStars: z.number().int() }) }),
    z.object({ ...question, type: z.literal('nps') }),
    z.object({ ...question, type: z.literal('long_text'), max_length: z.number().int().optional() }),
    z.object({ ...question, type: z.literal('short_text'), max_length: z.number().int().optional() }),
    z.object({ ...question, type: z.literal('email') }),
    z.object({ ...question, type: z.literal('phone'), default_country: z.string().optional() }),
    z.object({ ...question, type: z.literal('url') }),
    z.object({ ...question, type: z.literal('number'), min: z.number().optional(), max: z.number().optional(), integer: z.boolean().optional() }),
    z.object({ ...question, type: z.literal('date'), min: z.string().optional(), max: z.string().optional() }),
    z.object({ ...question, type: z.literal('single_choice'), choices: options, display: z.enum(['radio', 'dropdown']).optional() }),
    z.object({ ...question, type: z.literal('multiple_choice'), choices: options, min_selected: z.number().int().optional(), max_selected: z.number().int().optional() }),
    z.object({
      ...question,
      type: z.literal('opinion_scale'),
      start: z.number().int(),
      end: z.number().int(),
      start_label: z.string().optional(),
      end_label: z.string().optional(),
    }),
    z.object({ ...question, type: z.literal('yes_no') }),
    z.object({ ...question, type: z.literal('ranking'), choices: options }),
    z.object({ ...question, type: z.literal('matrix'), rows: options, columns: options }),
    z.object({ ...question, type: z.literal('statement') }),
    z.object({ ...question, type: z.literal('severity') }),
  ] as const;
export const questionTypes = typesOn(question);

/**
 * A condition as stored: a question, an operator and a value, or `all` or
 * `any` of conditions, nested as deep as the API takes them.
 */
const ConditionLeaf = z.object({
  question: z.string(),
  op: z.enum(['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'answered', 'not_answered']),
  value: z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]).optional(),
});
type StoredCondition = z.infer<typeof ConditionLeaf> | { all: StoredCondition[] } | { any: StoredCondition[] };
const groupsOf = (inner: z.ZodType<StoredCondition>): z.ZodType<StoredCondition> => z.union([ConditionLeaf, z.object({ all: z.array(inner) }), z.object({ any: z.array(inner) })]);
/** Named in the API document (as the views of stored objects show it): one component rather than a copy in every question. */
export const StoredCondition = groupsOf(groupsOf(groupsOf(ConditionLeaf))).register(z.globalRegistry, { id: 'StoredCondition' });

/** Version 7 of the form events (6 of the widget events): a question may hold `show_if`. */
export const conditionalQuestion = { ...question, show_if: StoredCondition.optional() };
export const conditionalQuestionTypes = typesOn(conditionalQuestion);

/**
 * The same versions: a definition's pages (none: one page of every
 * question), the rules that jump between them, and the endings they may
 * jump to.
 */
export const Flow = {
  pages: z.array(z.object({ id: z.string(), title: z.string().optional(), question_ids: z.array(z.string()) })),
  logic: z.array(z.object({ page: z.string(), if: StoredCondition, go_to: z.string() })),
  endings: z.array(z.object({ id: z.string(), title: z.string(), message: z.string(), redirect_url: z.string().optional() })),
};

/** Forms, version 7: one page at a time or one question at a time, and whether partial responses are kept. */
export const FormSettings = PageSettings.extend({ keep_partial: z.boolean() });
export const Presentation = z.enum(['all', 'one_by_one']);

export const ConsentQuestion = z.object({ ...question, type: z.literal('consent'), text: z.string() });
export const ConditionalConsentQuestion = z.object({ ...conditionalQuestion, type: z.literal('consent'), text: z.string() });

/** Version 4: the names of hidden fields a submission may carry, and where the visitor goes after submitting (null: nowhere). */
export const Followups = { hidden_fields: z.array(z.string()), redirect_url: z.string().nullable() };

/**
 * Settings grew `rate_limit`, `honeypot` and `prevent_duplicates` after
 * events of version 1 were first stored, and version 1 events written before
 * then lack them (those written since carry them, still as version 1). Absent
 * was always read as null, false and false; version 2 states all six, and
 * these upcasters fill in what version 1 left out.
 */
const settingsOfVersion1 = (settings: unknown): JsonObject => ({ rate_limit: null, honeypot: false, prevent_duplicates: false, ...(settings as JsonObject) });

/**
 * The next version of settings added `network_limit_per_hour`: the limit on
 * one address and browser, which objects stored before had in effect only
 * with their duplicate guard, is off unless an owner turns it on. Their
 * guard (`prevent_duplicates`, and every poll's) stays as it was.
 */
const settingsWithNetworkLimit = (settings: unknown): JsonObject => ({ network_limit_per_hour: null, ...(settings as JsonObject) });

/** Upcasters of the settings an event holds whole (`*Created`) or in its changes (`*Updated`), when they are there. */
const inCreated = (fill: (settings: unknown) => JsonObject) => (data: JsonObject) => ({ ...data, settings: fill(data.settings) });
const inUpdated = (fill: (settings: unknown) => JsonObject) => (data: JsonObject) => {
  const changes = data.changes as JsonObject | undefined;
  return changes?.settings === undefined ? data : { ...data, changes: { ...changes, settings: fill(changes.settings) } };
};

/** The versions of a `*Created` event, which stores the settings whole (polls). */
export const createdHistory = { version: 3, upcasters: { 1: inCreated(settingsOfVersion1), 2: inCreated(settingsWithNetworkLimit) } };

/** The versions of an `*Updated` event, whose `changes` hold the settings when they changed (polls). */
export const updatedHistory = { version: 3, upcasters: { 1: inUpdated(settingsOfVersion1), 2: inUpdated(settingsWithNetworkLimit) } };

/** Themes stored before text colours and modes showed the owner's colours with the text colour picked for them, as `light` does. */
const themeOfVersion2 = (theme: unknown): JsonObject => ({ text_color: null, mode: 'light', ...(theme as JsonObject) });

/** The versions of a `*Created` event that stores a theme (widgets, forms). */
export const themedCreatedHistory = {
  version: 4,
  upcasters: { 1: inCreated(settingsOfVersion1), 2: (data: JsonObject) => ({ ...data, theme: themeOfVersion2(data.theme) }), 3: inCreated(settingsWithNetworkLimit) },
};

/** The versions of an `*Updated` event that may change a theme. */
export const themedUpdatedHistory = {
  version: 4,
  upcasters: {
    1: inUpdated(settingsOfVersion1),
    2: (data: JsonObject) => {
      const changes = data.changes as JsonObject | undefined;
      return changes?.theme === undefined ? data : { ...data, changes: { ...changes, theme: themeOfVersion2(changes.theme) } };
    },
    3: inUpdated(settingsWithNetworkLimit),
  },
};

/** Hosted pages came with `indexable`; every page before it told search engines `noindex`. */
const settingsBeforePages = (settings: unknown): JsonObject => ({ ...(settings as JsonObject), indexable: false });

/** The history of a `*Created` event, and one more version whose settings hold `indexable`. */
export function pageCreatedHistory(history: { version: number; upcasters: Record<number, (data: JsonObject) => JsonObject> }) {
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: (data: JsonObject) => ({ ...data, settings: settingsBeforePages(data.settings) }) } };
}

/** The history of an `*Updated` event, and one more version whose changed settings hold `indexable`. */
export function pageUpdatedHistory(history: { version: number; upcasters: Record<number, (data: JsonObject) => JsonObject> }) {
  return {
    version: history.version + 1,
    upcasters: {
      ...history.upcasters,
      [history.version]: (data: JsonObject) => {
        const changes = data.changes as JsonObject | undefined;
        return changes?.settings === undefined ? data : { ...data, changes: { ...changes, settings: settingsBeforePages(changes.settings) } };
      },
    },
  };
}

/** The history of a `*Created` event that stores questions (widgets, forms), and one more version that added hidden fields and the redirect: none and null before. */
export function questionedCreatedHistory(history: { version: number; upcasters: Record<number, (data: JsonObject) => JsonObject> }) {
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: (data: JsonObject) => ({ ...data, hidden_fields: [], redirect_url: null }) } };
}

/** The history of an `*Updated` event that may change questions, and one more version: the changes of the one before read as they were. */
export function questionedUpdatedHistory(history: { version: number; upcasters: Record<number, (data: JsonObject) => JsonObject> }) {
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: (data: JsonObject) => data } };
}

type History = { version: number; upcasters: Record<number, (data: JsonObject) => JsonObject> };

/**
 * The history of a `*Created` event that stores questions, and one more
 * version that added pages, rules and endings (none before), and for forms
 * the presentation (a page at a time) and `keep_partial` (off).
 */
export function flowCreatedHistory(history: History, kind: 'form' | 'widget') {
  const upcast = (data: JsonObject): JsonObject => {
    const flow = { ...data, pages: [], logic: [], endings: [] };
    return kind === 'form' ? { ...flow, presentation: 'all', settings: { ...(data.settings as JsonObject), keep_partial: false } } : flow;
  };
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: upcast } };
}

/** The history of an `*Updated` event that may change questions, and one more version: a form's changed settings hold `keep_partial`, off before. */
export function flowUpdatedHistory(history: History, kind: 'form' | 'widget') {
  const upcast = (data: JsonObject): JsonObject => {
    const changes = data.changes as JsonObject | undefined;
    return kind === 'widget' || changes?.settings === undefined ? data : { ...data, changes: { ...changes, settings: { ...(changes.settings as JsonObject), keep_partial: false } } };
  };
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: upcast } };
}

/**
 * Version 8 of the form events, 7 of the widget events and 5 of the poll
 * events: the language the object is written in, and its translations by
 * language, each naming the texts it replaces by id.
 */
const labels = z.record(z.string(), z.string());
export const StoredTranslation = z.object({
  title: z.string().optional(),
  description: z.string().optional(),
  thank_you_title: z.string().optional(),
  thank_you_message: z.string().optional(),
  questions: z
    .record(
      z.string(),
      z.object({
        title: z.string().optional(),
        description: z.string().optional(),
        choices: labels.optional(),
        rows: labels.optional(),
        columns: labels.optional(),
        start_label: z.string().optional(),
        end_label: z.string().optional(),
        text: z.string().optional(),
      }),
    )
    .optional(),
  endings: z.record(z.string(), z.object({ title: z.string().optional(), message: z.string().optional() })).optional(),
  /** Polls: the question and the options' texts. */
  question: z.string().optional(),
  options: labels.optional(),
});
export const Languages = { language: z.string(), translations: z.record(z.string(), StoredTranslation) };

/** The history of a `*Created` event, and one more version with the language and translations: everything stored before was written in English, untranslated. */
export function languageCreatedHistory(history: History) {
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: (data: JsonObject) => ({ ...data, language: 'en', translations: {} }) } };
}

/** The history of an `*Updated` event, and one more version: the changes of the one before read as they were. */
export function languageUpdatedHistory(history: History) {
  return { version: history.version + 1, upcasters: { ...history.upcasters, [history.version]: (data: JsonObject) => data } };
}
