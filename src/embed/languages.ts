import { existsSync, readFileSync } from 'node:fs';

/**
 * The languages the embed and hosted pages speak. English is built into the
 * embed; every other language is a pack (`languages/<code>.json`, the same
 * keys as `en.json`), fetched by the embed only when a visitor needs it. A
 * string whose count matters is an object keyed by the plural categories of
 * `Intl.PluralRules` (`other` is required).
 */
export const LANGUAGES = [
  { code: 'en', name: 'English', dir: 'ltr' },
  { code: 'de', name: 'Deutsch', dir: 'ltr' },
  { code: 'fr', name: 'Français', dir: 'ltr' },
  { code: 'es', name: 'Español', dir: 'ltr' },
  { code: 'it', name: 'Italiano', dir: 'ltr' },
  { code: 'pt', name: 'Português', dir: 'ltr' },
  { code: 'nl', name: 'Nederlands', dir: 'ltr' },
  { code: 'pl', name: 'Polski', dir: 'ltr' },
  { code: 'sv', name: 'Svenska', dir: 'ltr' },
  { code: 'da', name: 'Dansk', dir: 'ltr' },
  { code: 'ja', name: '日本語', dir: 'ltr' },
  { code: 'zh', name: '中文', dir: 'ltr' },
  { code: 'ko', name: '한국어', dir: 'ltr' },
  { code: 'ar', name: 'العربية', dir: 'rtl' },
  { code: 'he', name: 'עברית', dir: 'rtl' },
  { code: 'tr', name: 'Türkçe', dir: 'ltr' },
  { code: 'ru', name: 'Русский', dir: 'ltr' },
  { code: 'uk', name: 'Українська', dir: 'ltr' },
] as const;

export type LanguageCode = (typeof LANGUAGES)[number]['code'];
export type Pack = Record<string, string | Record<string, string>>;

const codes: ReadonlySet<string> = new Set(LANGUAGES.map((l) => l.code));
export const isLanguage = (code: string): code is LanguageCode => codes.has(code);

const packs = new Map<string, { text: string; hosted: HostedStrings }>();

/** The hosted pages' own words (the page of an address with nothing to show), kept in each pack under `hosted`, never sent to the embed. */
export interface HostedStrings {
  not_found: string;
  missing_form: string;
  missing_poll: string;
  missing_why: string;
}

function pack(code: string): { text: string; hosted: HostedStrings } | undefined {
  if (!isLanguage(code)) return undefined;
  let found = packs.get(code);
  if (found === undefined) {
    const file = new URL(`./languages/${code}.json`, import.meta.url);
    if (!existsSync(file)) return undefined;
    // Parsed and written again: the served text is compact whatever the file's layout, and without the hosted pages' words.
    const { hosted, ...embed } = JSON.parse(readFileSync(file, 'utf8')) as Pack & { hosted: HostedStrings };
    found = { text: JSON.stringify(embed), hosted };
    packs.set(code, found);
  }
  return found;
}

/** A pack as the JSON text served (read once per process); undefined for a language without one. */
export function packText(code: string): string | undefined {
  return pack(code)?.text;
}

/** The language tags of an Accept-Language header, most wanted first (by q, then order; `q=0` left out), in lower case. */
export function acceptedLanguages(acceptLanguage: string | undefined): string[] {
  return (acceptLanguage ?? '')
    .split(',')
    .map((range, order) => {
      const [tag = '', ...params] = range.trim().toLowerCase().split(';');
      const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, order };
    })
    .filter((r) => r.q > 0 && r.tag !== '')
    .sort((a, b) => b.q - a.q || a.order - b.order)
    .map((r) => r.tag);
}

/** The direction a language is written in: right to left for Arabic and Hebrew (a regional tag by its language). */
export const directionOf = (tag: string): 'ltr' | 'rtl' => LANGUAGES.find((l) => l.code === tag.toLowerCase().split('-')[0])?.dir ?? 'ltr';

/**
 * The hosted pages' words for an Accept-Language header: its first range
 * (by q, then order) whose language has a pack, a regional tag by its
 * language (`de-AT` → `de`); else English.
 */
export function hostedStrings(acceptLanguage: string | undefined): { lang: string; strings: HostedStrings } {
  for (const tag of acceptedLanguages(acceptLanguage)) {
    const code = tag.split('-')[0] ?? '';
    const found = pack(code);
    if (found) return { lang: code, strings: found.hosted };
  }
  return { lang: 'en', strings: pack('en')!.hosted };
}
