import { z } from 'zod';

/** Hex (#rgb, #rgba, #rrggbb, #rrggbbaa) or rgb()/rgba()/hsl()/hsla() notation. */
export const Colour = z
  .string()
  .regex(
    /^(#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|(rgb|rgba|hsl|hsla)\(\s*[0-9.%]+(\s*,\s*|\s+)[0-9.%]+(\s*,\s*|\s+)[0-9.%]+((\s*,\s*|\s*\/\s*)[0-9.%]+)?\s*\))$/,
    'must be a CSS colour code such as #4f46e5 or rgb(79, 70, 229)',
  );

export const Theme = z.strictObject({
  primaryColor: Colour.default('#4f46e5'),
  backgroundColor: Colour.default('#ffffff'),
});
