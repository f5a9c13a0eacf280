import { z } from 'zod';
import { said } from '../kernel/text.js';
import { patchOf } from '../kernel/patch.js';
import { Settings } from './settings.js';
import { Theme } from './theme.js';
import { isWebUrl, QuestionId } from './questions.js';

/**
 * What widgets and forms show around their questions, and the settings of
 * their submissions: one set of fields for both, in their configuration,
 * their create and update bodies, and their views.
 */
export const Title = said(200);
export const Text = (max: number) => z.string().trim().max(max);

/** The fields a visitor sees. */
export const Shown = {
  title: Title,
  description: Text(2000),
  theme: Theme,
  thank_you_title: Text(200),
  thank_you_message: Text(2000),
};

/** Names of the values a submission may carry beside its answers (a UTM tag, a user id), declared by the owner. */
export const HiddenFields = z
  .array(QuestionId)
  .max(20)
  .refine((names) => new Set(names).size === names.length, 'hidden field names must be unique');

/** Where the visitor's page goes after a submission; `{{question id}}` and `{{hidden name}}` are filled in by the embed. */
export const RedirectUrl = z.string().trim().refine(isWebUrl, 'must be an absolute http or https URL of at most 2048 characters').nullable();

/** Stored whole in the created event. */
export const Presentation = { ...Shown, settings: Settings, hidden_fields: HiddenFields, redirect_url: RedirectUrl };

/** In a create body: only the title is required; nested objects merge key by key. */
export const PresentationPatch = {
  title: Title,
  description: Shown.description.optional(),
  theme: patchOf(Theme).optional(),
  thank_you_title: Shown.thank_you_title.optional(),
  thank_you_message: Shown.thank_you_message.optional(),
  settings: patchOf(Settings).optional(),
  hidden_fields: HiddenFields.optional(),
  redirect_url: RedirectUrl.optional(),
};
