import { z } from 'zod';

/*
 * What the OpenAPI document needs of every operation beyond its shapes, for
 * client generators: an `operationId` (the method name a generated client
 * gets: `listForms`, `submitWidgetResponse`), a description, and a
 * description of every path parameter. The document's tests refuse a route
 * without them, naming it.
 */

/** `widget` → `Widget`, for the operation ids each kind's shared routes are named by (`getWidget`, `listWidgets`). */
export const titled = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * The `:id` of a route under `/api/<things>/:id`, described. `prefix` is how
 * the service starts such ids (`wgt` for `wgt_01JD…`).
 */
export function idParams(thing: string, prefix: string) {
  return z.object({
    id: z
      .string()
      .max(200)
      .meta({ description: `The ${thing}'s id (\`${prefix}_\` and 26 characters), as its create reply gave it`, example: `${prefix}_01JD3Q5V8K2M4N6P8R0S2T4V6Z` }),
  });
}
