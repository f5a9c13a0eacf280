import { z } from 'zod';
import { AppError, type ErrorDetail } from '../kernel/errors.js';

/** Hex (#rgb, #rgba, #rrggbb, #rrggbbaa) or rgb()/rgba()/hsl()/hsla() notation. */
export const Colour = z
  .string()
  .regex(
    /^(#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|(rgb|rgba|hsl|hsla)\(\s*[0-9.%]+(\s*,\s*|\s+)[0-9.%]+(\s*,\s*|\s+)[0-9.%]+((\s*,\s*|\s*\/\s*)[0-9.%]+)?\s*\))$/,
    'must be a CSS colour code such as #4f46e5 or rgb(79, 70, 229)',
  );

/**
 * `light` shows the owner's colours; `dark` the embed's dark palette with the
 * owner's primary colour; `auto` one or the other as the visitor's
 * `prefers-color-scheme` says.
 */
export const ThemeMode = z.enum(['light', 'dark', 'auto']);

export const Theme = z.strictObject({
  primaryColor: Colour.default('#4f46e5').describe('Buttons, the launcher, the chosen answer; text on it is near-black or white, whichever reads better'),
  backgroundColor: Colour.default('#ffffff').describe('The panel in light mode'),
  text_color: Colour.nullable()
    .default(null)
    .describe('Text in light mode; needs a contrast of at least 4.5:1 on backgroundColor (else 400). null: near-black or white, whichever reads better'),
  mode: ThemeMode.default('light').describe("light: the owner's colours; dark: the embed's dark palette with primaryColor; auto: as the visitor's prefers-color-scheme says"),
});
export type Theme = z.output<typeof Theme>;

/** WCAG 2 asks 4.5:1 for body text. */
export const MIN_CONTRAST = 4.5;

interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

const clamp = (n: number, max: number) => Math.min(Math.max(n, 0), max);
const part = (text: string, max: number) => (text.endsWith('%') ? (parseFloat(text) / 100) * max : parseFloat(text));

/** A colour that `Colour` admits, as 0–255 channels and a 0–1 alpha. */
export function parseColour(colour: string): Rgba {
  if (colour.startsWith('#')) {
    const hex = colour.slice(1);
    const digits = hex.length <= 4 ? [...hex].map((d) => d + d) : hex.match(/../g)!;
    const [r, g, b, a = 'ff'] = digits.map((d) => parseInt(d, 16)) as unknown as [number, number, number, number?];
    return { r, g, b, a: typeof a === 'number' ? a / 255 : 1 };
  }
  const [fn, body] = colour.split('(') as [string, string];
  const [x, y, z, alpha] = body.replace(')', '').split(/\s*[,/]\s*|\s+/).filter(Boolean) as [string, string, string, string?];
  const a = alpha === undefined ? 1 : clamp(part(alpha, 1), 1);
  if (fn.startsWith('rgb')) return { r: clamp(part(x, 255), 255), g: clamp(part(y, 255), 255), b: clamp(part(z, 255), 255), a };
  const h = (((parseFloat(x) % 360) + 360) % 360) / 360;
  const s = clamp(parseFloat(y) / 100, 1);
  const l = clamp(parseFloat(z) / 100, 1);
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const channel = (t: number) => {
    t = (t + 1) % 1;
    const v = t < 1 / 6 ? p + (q - p) * 6 * t : t < 1 / 2 ? q : t < 2 / 3 ? p + (q - p) * (2 / 3 - t) * 6 : p;
    return v * 255;
  };
  return { r: channel(h + 1 / 3), g: channel(h), b: channel(h - 1 / 3), a };
}

const over = (top: Rgba, under: Rgba): Rgba => ({
  r: top.r * top.a + under.r * (1 - top.a),
  g: top.g * top.a + under.g * (1 - top.a),
  b: top.b * top.a + under.b * (1 - top.a),
  a: 1,
});

function luminance({ r, g, b }: Rgba): number {
  const linear = (c: number) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/**
 * The WCAG contrast ratio of text on a background. A translucent background
 * shows the host page through it, which may be anything: the ratio is the
 * worse of it over white and over black.
 */
export function contrastRatio(text: string, background: string): number {
  const fg = parseColour(text);
  const bg = parseColour(background);
  const ratio = (under: Rgba) => {
    const solid = over(bg, under);
    const [a, b] = [luminance(over(fg, solid)), luminance(solid)].sort((x, y) => y - x) as [number, number];
    return (a + 0.05) / (b + 0.05);
  };
  return Math.min(ratio({ r: 255, g: 255, b: 255, a: 1 }), ratio({ r: 0, g: 0, b: 0, a: 1 }));
}

/**
 * Refused at save rather than adjusted: an owner who names a text colour
 * gets it, or an error saying why not. Without one the embed picks the
 * better of near-black and white, which always reads.
 */
export function themeProblems(theme: Theme, path = 'body.theme'): ErrorDetail[] {
  if (theme.text_color === null) return [];
  const ratio = contrastRatio(theme.text_color, theme.backgroundColor);
  if (ratio >= MIN_CONTRAST) return [];
  return [
    {
      path: `${path}.text_color`,
      message: `has a contrast of ${Math.floor(ratio * 100) / 100}:1 on backgroundColor ${theme.backgroundColor}; text needs at least ${MIN_CONTRAST}:1 (or leave text_color out to get a readable one)`,
    },
  ];
}

/** themeProblems as the 400 a create or update gets. */
export function checkTheme(theme: Theme): void {
  const details = themeProblems(theme);
  if (details.length > 0) throw new AppError('validation_error', 'The theme\'s text would be hard to read', details);
}
