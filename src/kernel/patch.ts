import { z } from 'zod';

/**
 * The schema of a partial update to a nested object: its fields, all
 * optional, and none with a default. (zod keeps defaults through .partial(),
 * so a patch naming one key would reset every other key to its default.)
 */
export function patchOf<T extends z.ZodObject>(schema: T): z.ZodType<Partial<z.output<T>>> {
  const shape = Object.fromEntries(
    Object.entries(schema.shape).map(([key, field]) => [key, field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : (field as z.ZodType)]),
  );
  return z.strictObject(shape).partial() as unknown as z.ZodType<Partial<z.output<T>>>;
}
