import { isIP } from 'node:net';
import { z } from 'zod';

/** An empty variable counts as unset, as in most twelve-factor services. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const PORT_RANGE = 'must be a whole number from 1 to 65535';

/** Where the service is reached: links are made by adding paths to it, so it holds no ?query or #fragment. */
export const BaseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  // Checked on what is a URL only: zod goes on to refinements after a failed check.
  .refine((value) => !URL.canParse(value) || (!value.includes('?') && !value.includes('#')), 'must be an http(s) URL without ?query or #fragment: links are made by adding paths to it');
const TIMEOUT_RANGE = 'must be a whole number of milliseconds from 10 to 5000';
const STORE_TIMEOUT_RANGE = 'must be a whole number of milliseconds from 100 to 120000';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * TRUST_PROXY as fastify's trustProxy takes it: `true`/`false`, a hop count,
 * or a comma-separated list of addresses and CIDR ranges.
 */
const TrustProxy = z.string().transform((value, ctx): boolean | number | string => {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  if (/^[0-9a-fA-F:.,/\s]+$/.test(value)) return value;
  ctx.addIssue({ code: 'custom', message: 'must be true, false, a hop count or a list of addresses' });
  return z.NEVER;
});

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
/**
 * An address to listen on: an IP address, or a host name whose last label is
 * not all digits (RFC 3696), so a mistyped IPv4 address like 300.1.1.1 is
 * refused here instead of sent to a resolver.
 */
const Host = z.string().refine(
  (value) => isIP(value) !== 0 || (HOST_NAME.test(value) && !/^\d+$/.test(value.split('.').at(-1)!)),
  'must be an IP address or a host name',
);

export const ConfigSchema = z.object({
  /** Redis may take this long over one command before the request counts in memory instead. */
  REDIS_TIMEOUT_MS: optional(z.coerce.number(TIMEOUT_RANGE).int(TIMEOUT_RANGE).min(10, TIMEOUT_RANGE).max(5000, TIMEOUT_RANGE)).default(100),
  PORT: optional(z.coerce.number(PORT_RANGE).int(PORT_RANGE).min(1, PORT_RANGE).max(65535, PORT_RANGE)).default(3000),
  HOST: optional(Host).default('127.0.0.1'),
  DATA_DIR: optional(z.string()).default('./data'),
  EVENTSTORE_URL: optional(
    z.string().regex(/^(esdb|kurrentdb|kurrent)(\+discover)?:\/\/\S+$/, 'must be an esdb:// or kurrentdb:// connection string'),
  ),
  MONGODB_URL: optional(z.string().regex(/^mongodb(\+srv)?:\/\/\S+$/, 'must be a mongodb:// connection string')),
  /**
   * How long one call to KurrentDB or MongoDB may take before it fails (and
   * the request answers 503 store_unavailable): KurrentDB's deadline per call,
   * MongoDB's server selection, connection, pool wait and time limit per read;
   * a MongoDB write transaction, its retries included, gets four times this.
   * A connection string's own option of the same kind wins.
   */
  STORE_TIMEOUT_MS: optional(z.coerce.number(STORE_TIMEOUT_RANGE).int(STORE_TIMEOUT_RANGE).min(100, STORE_TIMEOUT_RANGE).max(120_000, STORE_TIMEOUT_RANGE)).default(5000),
  REDIS_URL: optional(z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')),
  SECRET: optional(z.string().min(32, 'must be at least 32 characters')),
  TRUST_PROXY: optional(TrustProxy),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`)).default('info'),
  PUBLIC_BASE_URL: optional(BaseUrl),
  ROLE: z.enum(['all', 'api', 'projector'], 'must be all, api or projector').default('all'),
  /** `off`: the projector of this process never seals the history by itself (`admin seal` still does). */
  SEALS: optional(z.enum(['on', 'off'], 'must be on or off')).default('on'),
  /** The bearer token GET /metrics asks for; unset, /metrics answers no one. */
  METRICS_TOKEN: optional(z.string().min(16, 'must be at least 16 characters').regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')),
  /** Lets webhooks reach loopback and private addresses (development and tests only). */
  WEBHOOK_ALLOW_PRIVATE: optional(z.enum(['true', 'false'], 'must be true or false')).default('false').transform((value) => value === 'true'),
  /** Minutes without a request after which a dashboard session ends. */
  DASHBOARD_IDLE_MINUTES: optional(z.string().regex(/^\d+$/, 'must be a whole number of minutes').transform(Number).refine((n) => n >= 1 && n <= 1440, 'must be from 1 to 1440')).default(30),
  /** Seconds a request, headers and body, may take to arrive before it is answered 408 `request_timeout`. */
  REQUEST_TIMEOUT_SECONDS: optional(z.string().regex(/^\d+$/, 'must be a whole number of seconds').transform(Number).refine((n) => n >= 1 && n <= 3600, 'must be from 1 to 3600')).default(60),
  /** Seconds between webhook attempts, comma-separated; one attempt more than it has entries. */
  WEBHOOK_RETRY_SCHEDULE: optional(
    z
      .string()
      .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'must be seconds, comma-separated, such as 5,300,1800')
      .transform((value) => value.split(',').map((seconds) => Math.round(Number(seconds) * 1000))),
  ),
  /** Where mail goes: `smtp://` or `smtps://`, credentials in the URL. Unset, mail (sign-in links among it) is written to the log. */
  SMTP_URL: optional(z.string().regex(/^smtps?:\/\/\S+$/, 'must be an smtp:// or smtps:// URL')),
  /** The sender of the service's mail. */
  MAIL_FROM: optional(z.string().trim().min(3).max(320).regex(/@/, 'must hold an email address, such as Feedback <feedback@example.com>')).default('Feedback <feedback@localhost>'),
  /** Seconds between attempts at a mail the SMTP server refused, comma-separated; one attempt more than it has entries. */
  MAIL_RETRY_SCHEDULE: optional(
    z
      .string()
      .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'must be seconds, comma-separated, such as 5,60,600')
      .transform((value) => value.split(',').map((seconds) => Math.round(Number(seconds) * 1000))),
  ),
  /** `open`: anyone may create a Free account by email from the sign-in page. */
  SIGNUP: optional(z.enum(['open', 'closed'], 'must be open or closed')).default('closed'),
}).superRefine((config, ctx) => {
  // A secret generated per DATA_DIR differs per instance: tokens issued by one
  // would fail on another, and visitor hashes (duplicate guards, vote streams)
  // would not match. Shared stores or split roles mean several instances.
  const shared = [
    ...(config.EVENTSTORE_URL ? ['EVENTSTORE_URL'] : []),
    ...(config.MONGODB_URL ? ['MONGODB_URL'] : []),
    ...(config.ROLE !== 'all' ? [`ROLE=${config.ROLE}`] : []),
  ];
  if (config.SECRET === undefined && shared.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['SECRET'], message: `must be set with ${shared.join(' and ')}: every instance must sign and hash with the same one` });
  }
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Values that may hold credentials are never echoed back. */
const SENSITIVE = new Set(['SECRET', 'EVENTSTORE_URL', 'MONGODB_URL', 'REDIS_URL', 'METRICS_TOKEN', 'SMTP_URL']);

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const result = ConfigSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = String(issue.path[0]);
  const value = env[name];
  const shown = SENSITIVE.has(name) || value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  throw new ConfigError(`invalid configuration: ${name} ${issue.message}${shown}`);
}
