import { z } from 'zod';

/** An empty variable counts as unset, as in most twelve-factor services. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const PORT_RANGE = 'must be a whole number from 1 to 65535';
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

export const ConfigSchema = z.object({
  PORT: optional(z.coerce.number(PORT_RANGE).int(PORT_RANGE).min(1, PORT_RANGE).max(65535, PORT_RANGE)).default(3000),
  HOST: optional(z.string()).default('127.0.0.1'),
  DATA_DIR: optional(z.string()).default('./data'),
  EVENTSTORE_URL: optional(
    z.string().regex(/^(esdb|kurrentdb|kurrent)(\+discover)?:\/\/\S+$/, 'must be an esdb:// or kurrentdb:// connection string'),
  ),
  MONGODB_URL: optional(z.string().regex(/^mongodb(\+srv)?:\/\/\S+$/, 'must be a mongodb:// connection string')),
  REDIS_URL: optional(z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')),
  SECRET: optional(z.string().min(32, 'must be at least 32 characters')),
  TRUST_PROXY: optional(TrustProxy),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`)).default('info'),
  PUBLIC_BASE_URL: optional(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
  ROLE: z.enum(['all', 'api', 'projector']).default('all'),
  /** Lets webhooks reach loopback and private addresses (development and tests only). */
  WEBHOOK_ALLOW_PRIVATE: optional(z.enum(['true', 'false'], 'must be true or false')).default('false').transform((value) => value === 'true'),
  /** Seconds between webhook attempts, comma-separated; one attempt more than it has entries. */
  WEBHOOK_RETRY_SCHEDULE: optional(
    z
      .string()
      .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'must be seconds, comma-separated, such as 5,300,1800')
      .transform((value) => value.split(',').map((seconds) => Math.round(Number(seconds) * 1000))),
  ),
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
const SENSITIVE = new Set(['SECRET', 'EVENTSTORE_URL', 'MONGODB_URL', 'REDIS_URL']);

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const result = ConfigSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = String(issue.path[0]);
  const value = env[name];
  const shown = SENSITIVE.has(name) || value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  throw new ConfigError(`invalid configuration: ${name} ${issue.message}${shown}`);
}
