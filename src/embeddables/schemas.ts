import { z } from 'zod';

/** What an object id looks like; anything else is not found without asking a store. */
export const ID = /^[A-Za-z0-9_-]{1,64}$/;
export const Params = z.object({ id: z.string().max(200) });
