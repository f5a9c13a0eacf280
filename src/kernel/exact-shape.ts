import { Ajv } from 'ajv';
import { z } from 'zod';

/**
 * Whether a value already has exactly a schema's output shape: every field
 * the schema requires, none it does not know, each of its type. Parsing such
 * a value with zod hands back a deep copy equal to it, so a reader that only
 * needs to know the value is valid may keep the value itself and skip the
 * copy. Replaying a history reads every event through here: zod's copy and
 * the comparison of it with the stored data were a fifth of the work of
 * preparing a rebuild.
 *
 * A yes is only ever given where zod's answer is known to be the same value:
 * the check is compiled (ajv) from zod's own JSON Schema of the output, and
 * only for schemas built of parts whose JSON Schema says all that zod
 * checks (see `faithful`). For any other schema there is no check
 * (undefined), and a no only means "ask zod", which may still accept the
 * value, dropping a field or filling a default.
 */
export type ExactShape = (value: unknown) => boolean;

const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: false });

export function exactShape(schema: z.ZodType): ExactShape | undefined {
  if (!faithful(schema)) return undefined;
  const check = ajv.compile(z.toJSONSchema(schema, { io: 'output', target: 'draft-07', unrepresentable: 'throw' }) as object);
  return (value) => check(value) === true;
}

/** Zod types whose JSON Schema is the whole of what zod checks, and whose output is their input. */
const PLAIN = new Set(['string', 'number', 'boolean', 'null', 'enum', 'literal']);
/** Checks JSON Schema states exactly. Not patterns or formats: ajv's regular expressions are not zod's. */
const STATED_CHECKS = new Set(['min_length', 'max_length', 'length_equals', 'greater_than', 'less_than']);
/** Number formats: a whole number in the safe range is JSON Schema's integer with its bounds. */
const STATED_NUMBER_FORMATS = new Set(['safeint']);

/**
 * Whether zod's JSON Schema of this schema's output says all it checks.
 * Refinements, transforms, pipes and formats are not, or not exactly, in
 * it. A union of two objects or more is left out too: zod takes the first
 * option that parses, which may be one that drops the fields another has.
 */
function faithful(schema: z.ZodType): boolean {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string; checks?: Array<{ _zod: { def: { check: string; format?: string } } }> };
  for (const check of def.checks ?? []) {
    const { check: kind, format } = check._zod.def;
    if (kind === 'number_format' ? !STATED_NUMBER_FORMATS.has(format ?? '') : !STATED_CHECKS.has(kind)) return false;
  }
  switch (def.type) {
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      const catchall = def.catchall as z.ZodType | undefined;
      return Object.values(shape).every(faithful) && (catchall === undefined || catchall._zod.def.type === 'never' || faithful(catchall));
    }
    case 'optional':
    case 'nullable':
    case 'default':
      // A default fills an absent field: the output's schema requires it, so a value without it is not of the shape.
      return faithful(def.innerType as z.ZodType);
    case 'array':
      return faithful(def.element as z.ZodType);
    case 'union': {
      // Zod takes the first option that parses. Values of one JSON type meet at most one object option, so no
      // option is chosen over another that would keep more of it; arrays and plain values drop nothing.
      const options = def.options as z.ZodType[];
      return options.filter((option) => option._zod.def.type === 'object').length <= 1 && options.every(faithful);
    }
    default:
      return PLAIN.has(def.type);
  }
}
