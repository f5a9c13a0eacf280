import { z } from 'zod';
import { idParams } from '../http/operations.js';

/** What an object id looks like; anything else is not found without asking a store. */
export const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The `:id` of a route the OpenAPI document leaves out (the dashboard's). */
export const Params = z.object({ id: z.string().max(200) });
/** The `:id` of a widget, form or poll route, described by its kind. */
export const ParamsOf = { widget: idParams('widget', 'wgt'), form: idParams('form', 'frm'), poll: idParams('poll', 'pol') } as const;
