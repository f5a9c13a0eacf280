/**
 * The admin commands as `admin --help` lists them, in that order. This module
 * imports nothing, so that the help and a mistyped command answer without
 * loading the stores, the schemas or the domain (see program.ts).
 */
export const COMMANDS = [
  { name: 'create-account', description: 'open an account with its first key; prints the key, once' },
  { name: 'add-member', description: 'make an address a member of an account with a role, at once (no invitation)' },
  { name: 'list-members', description: "an account's members: address, role and when they joined" },
  { name: 'create-key', description: 'make another key for an account; prints the key, once' },
  { name: 'revoke-key', description: 'revoke a key (the server refuses it within 2 s)' },
  { name: 'list-keys', description: "an account's keys: prefix, scopes and dates, never a key" },
  { name: 'set-plan', description: "change an account's plan" },
  { name: 'login-link', description: 'a one-time link that signs in to the dashboard as the account, valid 15 minutes' },
  { name: 'events', description: 'the event history as NDJSON, one event a line with its position' },
  { name: 'rebuild', description: 'rebuild every read model from the event history (a running server keeps serving)' },
  { name: 'seal', description: 'seal every event not sealed yet (the server seals every 1000 events or 10 s)' },
  { name: 'encrypt-existing', description: 'encrypt the responses and votes stored before the service encrypted them, then rebuild (resumable)' },
  { name: 'verify', description: 'check the history against its seals; exit 1 naming the first break' },
  { name: 'audit', description: 'the history of one widget, form or poll and of its responses (never their content)' },
  { name: 'scavenge', description: 'with KurrentDB, start a scavenge on each node of EVENTSTORE_URL (erased events leave its files only then)' },
  { name: 'status', description: 'the head of the history, each projection, a halt if any, and who holds the projector lease' },
] as const;

export type CommandName = (typeof COMMANDS)[number]['name'];

export const isCommand = (name: string | undefined): name is CommandName => COMMANDS.some((command) => command.name === name);
