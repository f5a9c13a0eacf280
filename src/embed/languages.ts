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

const packs = new Map<string, string>();

/** A pack as the JSON text served (read once per process); undefined for a language without one. */
export function packText(code: string): string | undefined {
  if (!isLanguage(code)) return undefined;
  let text = packs.get(code);
  if (text === undefined) {
    const file = new URL(`./languages/${code}.json`, import.meta.url);
    if (!existsSync(file)) return undefined;
    // Parsed and written again: the served text is compact whatever the file's layout.
    text = JSON.stringify(JSON.parse(readFileSync(file, 'utf8')) as Pack);
    packs.set(code, text);
  }
  return text;
}
