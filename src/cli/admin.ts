/**
 * The admin command line of decision D1: provisioning of accounts and keys,
 * the audit feed, rebuilds and scavenges. It opens the same stores as the
 * server (same environment) and works while the server runs.
 *
 * Exit status: 0 done (also when the reader of its output went away, as
 * `admin events | head` does), 1 the stores failed, the configuration is
 * invalid, the history holds an event this version cannot read (rebuild) or
 * the history is not what was sealed (verify),
 * 2 bad arguments (including ids that do not exist).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { z } from 'zod';
import { changePlan, createKey, listKeys, openAccount, revokeKey } from '../accounts/commands.js';
import { checkpointKey } from '../kernel/feed/projection.js';
import { projections } from '../../projections/index.js';
import { haltMessage, haltView } from '../kernel/feed/halt.js';
import { Plan, Scope, DEFAULT_SCOPES } from '../accounts/plans.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { AppError } from '../kernel/errors.js';
import { isoInstant } from '../kernel/instant.js';
import { issueLoginLink } from '../dashboard/commands.js';
import type { StoredEvent } from '../infra/event-store/port.js';
import { scavengeRequests, startScavenge } from '../infra/event-store/kurrent-scavenge.js';
import { PROJECTOR_LEASE } from '../kernel/feed/lease.js';
import { createLogger, openServices, type Services } from '../services.js';
import { audit, auditCommand } from './audit.js';
import { rebuildAt } from './point-in-time.js';
import { seal, verify, verifyCommand } from './verify.js';
import { catalog } from '../domain-events.js';
import { lastSeal } from '../seals/process.js';
import { readPointInTime, UnreadableMark, type PointInTime } from '../seals/point-in-time.js';
import { DATABASE_FILE, holdsTable } from '../infra/sqlite.js';
import { SECRET_FILE } from '../infra/secret.js';

type Output = (line: string) => void;

/** What a command's job gets: the configuration, the stores (opened on first use) and stdout. */
interface Context {
  config: Config;
  stores(): Promise<Services>;
  out: Output;
  err: Output;
}

/**
 * One command: its options as commander shows them (the description is also
 * the hint when the option is missing), the schema its values must pass, and
 * the job it runs once they did.
 */
interface CommandSpec<S extends z.ZodType> {
  name: string;
  description: string;
  options: Array<{ flags: `--${string} <${string}>`; description: string }>;
  schema: S;
  /**
   * What the command does with the history: `reads` it only, so the store
   * must be there already (a mistyped DATA_DIR is not an empty history
   * that verifies), or `appends` to it, which a point-in-time copy refuses.
   */
  history?: 'reads' | 'appends';
  /** A number is the exit status, for a command that has its own (verify: 1 on a break). */
  job(values: z.output<S>, context: Context): Promise<void | number>;
}
const command = <S extends z.ZodType>(spec: CommandSpec<S>) => spec as unknown as CommandSpec<z.ZodType>;

/** Bad arguments: exit 2, one line on stderr. */
class UsageError extends Error {}
/** Stdout's reader went away: nothing more to say, and nothing wrong. */
class OutputClosed extends Error {}
class StoresUnavailable extends Error {}

const SCOPE_LIST = `comma-separated, from ${Scope.options.join(', ')} (default ${DEFAULT_SCOPES.join(',')})`;
const PLANS = 'free, pro or business';

const Scopes = z
  .string()
  .transform((list) => list.split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(z.enum(Scope.options, `must come from ${Scope.options.join(', ')}`)).min(1, 'must name at least one scope'))
  .transform((scopes) => [...new Set(scopes)]);
const Name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const Id = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'is not a valid id');
const Position = z.string().regex(/^\d{1,20}$/, 'must be a whole number').transform(BigInt);
const PlanOption = z.enum(Plan.options, `must be ${PLANS}`);
/**
 * `--after` takes a position as printed: exclusive, so the last position of
 * one run resumes the next. Not `--from N` read as N - 1: KurrentDB's
 * positions are byte offsets in its log, so N - 1 names no event there.
 */
const EventsOptions = z
  .object({ stream: z.string().min(1).max(300).optional(), from: Position.optional(), after: Position.optional() })
  .superRefine((values, ctx) => {
    if (values.after !== undefined && values.stream !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['after'], message: 'is a position in the whole history; with --stream, give --from REVISION' });
    }
    if (values.from !== undefined && values.stream === undefined) {
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'is a revision of --stream; for the whole history, give --after POSITION' });
    }
  });
const Threads = z.string().regex(/^[1-9]\d{0,2}$/, 'must be a whole number from 1 to 999').transform(Number);

const auditLine = (e: StoredEvent) =>
  JSON.stringify({
    position: String(e.position),
    stream: e.streamId,
    revision: Number(e.revision),
    id: e.id,
    type: e.type,
    recorded_at: e.recordedAt,
    data: e.data,
    metadata: e.metadata,
  });

async function printEvents(services: Services, values: { stream?: string; from?: bigint; after?: bigint }, out: Output) {
  if (values.stream) {
    for (const e of await services.events.readStream(values.stream, { fromRevision: values.from ?? 0n })) out(auditLine(e));
    return;
  }
  let after = values.after ?? 0n;
  for (;;) {
    const page = await services.events.readAll({ after, limit: 1000 });
    if (page.length === 0) return;
    for (const e of page) out(auditLine(e));
    after = page[page.length - 1]!.position;
  }
}

/** Brings the projections as far as they go first, so that a halt shows here as it would in the server. */
async function printStatus(services: Services, out: Output) {
  await services.projections.catchUp();
  const [head, checkpoints, lease, sealed] = await Promise.all([
    services.events.headPosition(),
    services.readModels.checkpoints(),
    services.readModels.lease(PROJECTOR_LEASE),
    lastSeal(services.events, catalog),
  ]);
  const halted = services.projections.halted;
  out(
    JSON.stringify({
      head: String(head),
      projections: projections.map((p) => ({ name: p.name, version: p.version, checkpoint: String(checkpoints.get(checkpointKey(p)) ?? 0n) })),
      halted: halted ? haltView(halted) : null,
      projector: lease ? { holder: lease.holder, expires_at: lease.expiresAt.toISOString() } : null,
      last_seal: sealed ? { seal: sealed.seal.seal, through: sealed.seal.through, count: sealed.seal.count, hash: sealed.seal.hash, sealed_at: sealed.seal.sealed_at } : null,
    }),
  );
}

/** Every command, one entry each, in the order `--help` lists them. */
const COMMANDS: Array<CommandSpec<z.ZodType>> = [
  command({
    name: 'create-account',
    history: 'appends',
    description: 'open an account with its first key; prints the key, once',
    options: [
      { flags: '--name <name>', description: 'the account name' },
      { flags: '--plan <plan>', description: PLANS },
      { flags: '--scopes <list>', description: SCOPE_LIST },
    ],
    schema: z.object({ name: Name, plan: PlanOption, scopes: Scopes.optional() }),
    job: async (v, { stores, out }) => out(JSON.stringify(await openAccount(await stores(), { name: v.name, plan: v.plan, scopes: v.scopes ?? DEFAULT_SCOPES }))),
  }),
  command({
    name: 'create-key',
    history: 'appends',
    description: 'make another key for an account; prints the key, once',
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--name <name>', description: 'a name for the key' },
      { flags: '--scopes <list>', description: SCOPE_LIST },
    ],
    schema: z.object({ account: Id, name: Name, scopes: Scopes.optional() }),
    job: async (v, { stores, out }) => out(JSON.stringify(await createKey(await stores(), { accountId: v.account, name: v.name, scopes: v.scopes ?? DEFAULT_SCOPES }))),
  }),
  command({
    name: 'revoke-key',
    history: 'appends',
    description: 'revoke a key (the server refuses it within 2 s)',
    options: [{ flags: '--key <id>', description: 'the key id (key_…)' }],
    schema: z.object({ key: Id }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      // The key's account is found through the read models: bring them up to date first.
      await services.projections.catchUp();
      out(JSON.stringify(await revokeKey(services, v.key)));
    },
  }),
  command({
    name: 'list-keys',
    description: "an account's keys: prefix, scopes and dates, never a key",
    options: [{ flags: '--account <id>', description: 'the account id (acc_…)' }],
    schema: z.object({ account: Id }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      await services.projections.catchUp();
      out(JSON.stringify(await listKeys(services, v.account)));
    },
  }),
  command({
    name: 'set-plan',
    history: 'appends',
    description: "change an account's plan",
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--plan <plan>', description: PLANS },
    ],
    schema: z.object({ account: Id, plan: PlanOption }),
    job: async (v, { stores, out }) => out(JSON.stringify(await changePlan(await stores(), v.account, v.plan))),
  }),
  command({
    name: 'login-link',
    history: 'appends',
    description: 'a one-time link that signs in to the dashboard as the account, valid 15 minutes',
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--base <url>', description: 'where the service is reached (default PUBLIC_BASE_URL)' },
    ],
    schema: z.object({ account: Id, base: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional() }),
    job: async (v, { stores, out }) => out(JSON.stringify(await issueLoginLink(await stores(), { accountId: v.account, ...(v.base ? { base: v.base } : {}) }))),
  }),
  command({
    name: 'events',
    history: 'reads',
    description: 'the event history as NDJSON, one event a line with its position',
    options: [
      { flags: '--after <position>', description: 'start just after this position (one this command printed)' },
      { flags: '--stream <stream>', description: "only this stream's events" },
      { flags: '--from <revision>', description: 'with --stream: from this revision (0-based, inclusive)' },
    ],
    schema: EventsOptions,
    job: async (v, { stores, out }) => printEvents(await stores(), v, out),
  }),
  command({
    name: 'rebuild',
    history: 'reads',
    description: 'rebuild every read model from the event history (a running server keeps serving)',
    options: [
      { flags: '--until <time>', description: 'with --out: the read models as they stood at this ISO 8601 time' },
      { flags: '--out <dir>', description: 'with --until: a new embedded store, which `DATA_DIR=DIR npm start` serves read-only' },
    ],
    schema: z
      .object({
        until: isoInstant('must be an ISO 8601 time, such as 2026-11-01T00:00:00Z').transform((t) => new Date(t)).optional(),
        out: z.string().min(1, 'must not be empty').optional(),
      })
      .refine((v) => (v.until === undefined) === (v.out === undefined), { path: ['until'], message: 'and --out go together' }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      if (v.until && v.out) return rebuildAt(services, { until: v.until, out: v.out }, out);
      const started = performance.now();
      const events = await services.projections.rebuild();
      const halted = services.projections.halted;
      if (halted) throw new Error(haltMessage(halted));
      const seconds = (performance.now() - started) / 1000;
      out(JSON.stringify({ rebuilt: true, events, seconds: Number(seconds.toFixed(3)) }));
    },
  }),
  command({
    name: 'seal',
    history: 'appends',
    description: 'seal every event not sealed yet (the server seals every 1000 events or 10 s)',
    options: [],
    schema: z.object({}),
    job: async (_v, { stores, out }) => seal(await stores(), out),
  }),
  command({
    name: 'verify',
    history: 'reads',
    description: 'check the history against its seals; exit 1 naming the first break',
    options: [{ flags: '--expect <hash>', description: 'a last_seal_hash printed earlier, which the chain must still hold' }],
    schema: verifyCommand.schema,
    job: async (v, { stores, out, err }) => verify(await stores(), v, out, err),
  }),
  command({
    name: 'audit',
    history: 'reads',
    description: 'the history of one widget, form or poll and of its responses (never their content)',
    options: [
      { flags: '--object <id>', description: 'the widget, form or poll id' },
      { flags: '--format <format>', description: 'ndjson (default) or table' },
    ],
    schema: auditCommand.schema,
    job: async (v, { stores, out }) => audit(await stores(), v, out),
  }),
  command({
    name: 'scavenge',
    description: 'with KurrentDB, start a scavenge on each node of EVENTSTORE_URL (erased events leave its files only then)',
    options: [{ flags: '--threads <n>', description: 'scavenge threads a node, 1 to 999' }],
    schema: z.object({ threads: Threads.optional() }),
    job: async (v, { config, stores, out }) => {
      if (config.EVENTSTORE_URL) return scavengeKurrent(config.EVENTSTORE_URL, v.threads, out);
      const services = await stores();
      // Erasure already did this; again here for one a reader held up (the store warns then).
      await Promise.all([services.events.expunge(), services.readModels.expunge()]);
      out(JSON.stringify({ store: services.events.kind, scavenge_id: null, needed: false, reason: 'the embedded store overwrites erased events when it erases them' }));
    },
  }),
  command({
    name: 'status',
    history: 'reads',
    description: 'the head of the history, each projection, a halt if any, and who holds the projector lease',
    options: [],
    schema: z.object({}),
    job: async (_v, { stores, out }) => printStatus(await stores(), out),
  }),
];

/**
 * The scavenge of KurrentDB goes to its nodes' HTTP endpoint, so it needs
 * neither the gRPC connection nor the read models: the stores stay closed.
 */
async function scavengeKurrent(url: string, threads: number | undefined, out: Output): Promise<void> {
  for (const request of scavengeRequests(url, threads === undefined ? {} : { threads })) {
    out(JSON.stringify({ node: request.node, scavenge_id: await startScavenge(request) }));
  }
}

/** The options' values as the command's schema takes them, or the one thing wrong with them. */
function validate(spec: CommandSpec<z.ZodType>, values: Record<string, unknown>): unknown {
  const parsed = spec.schema.safeParse(values);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = issue.path.length ? String(issue.path[0]) : undefined;
  if (name === undefined) throw new UsageError(`${spec.name}: ${issue.message}`);
  if (values[name] === undefined) {
    const hint = spec.options.find((option) => option.flags.startsWith(`--${name} `))?.description;
    throw new UsageError(`missing --${name}${hint ? ` (${hint})` : ''}`);
  }
  throw new UsageError(`--${name} ${issue.message}`);
}

/** Commander's refusals, in this command's words. */
function reworded(error: CommanderError, argv: string[]): string {
  const name = COMMANDS.some((spec) => spec.name === argv[0]) ? argv[0] : undefined;
  const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? '';
  const suggested = /\(Did you mean (?:one of )?([^?]+)\?\)/.exec(error.message)?.[1];
  const suggestion = suggested ? ` — did you mean ${suggested.split(', ').map((s) => `'${s}'`).join(' or ')}?` : '';
  switch (error.code) {
    case 'commander.unknownCommand':
      return `unknown command '${argv[0]}'${suggestion}`;
    case 'commander.unknownOption':
      return `unknown option '${quoted}'${name ? ` for ${name}` : ''}${suggestion}`;
    case 'commander.optionMissingArgument':
      return `${quoted.split(' ')[0]} needs a value`;
    case 'commander.excessArguments':
      return `${name ?? 'admin'} takes options only, not arguments`;
    default:
      return error.message.replace(/^error: /, '');
  }
}

/**
 * Parses argv into the job to run: help goes to stdout and answers undefined;
 * bad arguments throw UsageError (help is printed only for no command at all).
 */
interface Chosen {
  spec: CommandSpec<z.ZodType>;
  run(context: Context): Promise<void | number>;
}

async function parse(argv: string[], write: { out: (text: string) => void; err: (text: string) => void }): Promise<Chosen | undefined> {
  let chosen: Chosen | undefined;
  const program = new Command('admin')
    .usage('<command> [options]')
    .description('Provisioning, the audit feed and maintenance, on the stores the server uses (same environment: DATA_DIR or the store URLs, and SECRET).')
    .exitOverride()
    .configureOutput({ writeOut: write.out, writeErr: write.err, outputError: () => {} })
    .addHelpText('after', '\nEach command prints JSON on stdout. `admin <command> --help` lists its options.');
  for (const spec of COMMANDS) {
    const cli = program.command(spec.name).description(spec.description);
    for (const option of spec.options) cli.option(option.flags, option.description);
    cli.action((options: Record<string, unknown>) => {
      const values = validate(spec, options);
      chosen = { spec, run: (context) => spec.job(values, context) };
    });
  }
  if (argv.length === 0) {
    write.err('admin: a command is required\n\n');
    program.outputHelp({ error: true });
    throw new UsageError('');
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return undefined;
    throw new UsageError(reworded(error, argv));
  }
  if (!chosen) throw new UsageError('a command is required');
  return chosen;
}

/** Runs one CLI invocation and answers its exit status. */
async function admin(argv: string[], env: NodeJS.ProcessEnv, out: Output, err: Output): Promise<number> {
  let job: Chosen | undefined;
  try {
    job = await parse(argv, { out: (text) => out(text.replace(/\n$/, '')), err: (text) => err(text.replace(/\n$/, '')) });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) err(`admin: ${error.message}`);
    return 2;
  }
  if (!job) return 0;
  let config: Config;
  try {
    // The CLI counts no requests, so it does not need Redis (nor to wait for one that is down).
    config = { ...loadConfig(env), REDIS_URL: undefined };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    err(error.message);
    return 1;
  }
  // The embedded store only: a server's URL names a store that is there, and a point-in-time copy is embedded.
  if (!config.EVENTSTORE_URL) {
    const file = join(config.DATA_DIR, DATABASE_FILE);
    if (job.spec.history === 'reads' && !existsSync(file)) {
      err(`admin: no store in DATA_DIR ${resolve(config.DATA_DIR)} (${job.spec.name} reads an existing history; is the path right?)`);
      return 1;
    }
    // SQLite takes an empty file for an empty database, which would verify: a truncated store is not one that holds nothing.
    if (job.spec.history === 'reads' && statSync(file).size === 0) {
      err(`admin: ${resolve(file)} is empty (0 bytes), not a store: ${job.spec.name} reads an existing history`);
      return 1;
    }
    // Opening it would make the tables anew, and a wiped or another program's file would read as an empty history.
    if (job.spec.history === 'reads' && holdsTable(file, 'events') === false) {
      err(`admin: ${resolve(file)} holds no event store (no events table): ${job.spec.name} reads an existing history`);
      return 1;
    }
    // A reading command makes nothing in DATA_DIR: without the secret there, it runs on one of its own, as it signs nothing that outlives it.
    if (job.spec.history === 'reads' && !config.SECRET && !existsSync(join(config.DATA_DIR, SECRET_FILE))) {
      config = { ...config, SECRET: randomBytes(32).toString('base64url') };
    }
    let pointInTime: PointInTime | undefined;
    try {
      pointInTime = job.spec.history === 'appends' ? readPointInTime(config.DATA_DIR) : undefined;
    } catch (error) {
      if (!(error instanceof UnreadableMark)) throw error;
      err(`admin: ${error.message}`);
      return 1;
    }
    if (pointInTime) {
      err(`admin: ${job.spec.name}: DATA_DIR holds the history as of ${pointInTime.until}, which is read-only`);
      return 2;
    }
  }
  let services: Services | undefined;
  const stores = async () => {
    try {
      services ??= await openServices(config, { logger: createLogger({ LOG_LEVEL: 'warn' }, process.stderr) });
      return services;
    } catch (error) {
      throw new StoresUnavailable(`could not open the stores: ${(error as Error).message}`);
    }
  };
  try {
    const status = await job.run({ config, stores, out, err });
    return typeof status === 'number' ? status : 0;
  } catch (error) {
    if (error instanceof OutputClosed) return 0;
    if (error instanceof AppError && error.statusCode < 500) {
      err(`admin: ${error.message}`);
      return 2;
    }
    err(`admin: ${(error as Error).message}`);
    return 1;
  } finally {
    await services?.close();
  }
}

/** Set once stdout's reader has gone (`admin events | head`): the job stops at its next line, quietly. */
let outputClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  outputClosed = true;
});

process.exitCode = await admin(
  process.argv.slice(2),
  process.env,
  (line) => {
    if (outputClosed) throw new OutputClosed();
    process.stdout.write(`${line}\n`);
  },
  (line) => process.stderr.write(`${line}\n`),
);
