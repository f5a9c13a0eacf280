/**
 * The admin command line of decision D1: provisioning of accounts and keys,
 * the audit feed, rebuilds and scavenges. It opens the same stores as the
 * server (same environment) and works while the server runs.
 *
 * Exit status: 0 done, 1 the stores failed, the configuration is invalid or
 * the history holds an event this version cannot read (rebuild), or the
 * history is not what was sealed (verify),
 * 2 bad arguments (including ids that do not exist).
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { changePlan, createKey, listKeys, openAccount, revokeKey } from '../accounts/commands.js';
import { checkpointKey } from '../../projections/projection.js';
import { projections } from '../../projections/index.js';
import { haltMessage, haltView } from '../../projections/halt.js';
import { Plan, Scope, DEFAULT_SCOPES } from '../accounts/plans.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { AppError } from '../errors.js';
import type { StoredEvent } from '../infra/event-store/port.js';
import { scavengeRequests, startScavenge } from '../infra/event-store/kurrent-scavenge.js';
import { PROJECTOR_LEASE } from '../projector.js';
import { createLogger, openServices, type Services } from '../services.js';
import { audit, auditCommand } from './audit.js';
import { rebuildAt } from './point-in-time.js';
import { seal, verify, verifyCommand } from './verify.js';

const USAGE = `usage: admin <command> [options]

  create-account --name NAME --plan free|pro|business [--scopes LIST]
  create-key --account ID --name NAME [--scopes LIST]
  revoke-key --key KEY_ID
  list-keys --account ID
  set-plan --account ID --plan free|pro|business
  events [--after POSITION]             the event history as NDJSON, from the start or from just after
                                        POSITION (the "position" of a line it printed, on either store)
  events --stream STREAM [--from REV]   one stream's events, from revision REV (0-based, inclusive)
  rebuild                               rebuild every read model from the event history (a running server keeps serving)
  rebuild --until ISO_TIME --out DIR    the read models as they stood at that moment, in a new embedded store in DIR
                                        (with the events up to then), which \`DATA_DIR=DIR npm start\` serves read-only
  seal                                  seal every event not sealed yet (the server seals every 1000 events or 10 s)
  verify [--expect HASH]                check the history against its seals; exit 1 naming the first break.
                                        HASH: a last_seal_hash printed earlier, which the chain must still hold
  audit --object ID [--format ndjson|table]
                                        the history of one widget, form or poll and of its responses (no content)
  scavenge [--threads N]                with KurrentDB, start a scavenge on each node in EVENTSTORE_URL
                                        (erased events leave its files only then); else nothing to do
  status                                the head of the history, each projection's position, a halt if any,
                                        and which process holds the projector lease (and until when)

LIST is comma-separated, from: ${Scope.options.join(', ')} (default ${DEFAULT_SCOPES.join(',')}).`;

class UsageError extends Error {}

type Output = (line: string) => void;

const Scopes = z
  .string()
  .transform((list) => list.split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(Scope, { error: `scopes must come from ${Scope.options.join(', ')}` }).min(1, 'give at least one scope'))
  .transform((scopes) => [...new Set(scopes)]);
const Name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const Id = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'is not a valid id');
const Position = z.string().regex(/^\d{1,20}$/, 'must be a whole number').transform(BigInt);
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

const COMMANDS = {
  'create-account': {
    options: { name: { type: 'string' }, plan: { type: 'string' }, scopes: { type: 'string' } },
    schema: z.object({ name: Name, plan: Plan, scopes: Scopes.optional() }),
  },
  'create-key': {
    options: { account: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } },
    schema: z.object({ account: Id, name: Name, scopes: Scopes.optional() }),
  },
  'revoke-key': { options: { key: { type: 'string' } }, schema: z.object({ key: Id }) },
  'list-keys': { options: { account: { type: 'string' } }, schema: z.object({ account: Id }) },
  'set-plan': {
    options: { account: { type: 'string' }, plan: { type: 'string' } },
    schema: z.object({ account: Id, plan: Plan }),
  },
  events: {
    options: { stream: { type: 'string' }, from: { type: 'string' }, after: { type: 'string' } },
    schema: EventsOptions,
  },
  rebuild: {
    options: { until: { type: 'string' }, out: { type: 'string' } },
    schema: z
      .object({ until: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time, such as 2026-11-01T00:00:00Z' }).transform((t) => new Date(t)).optional(), out: z.string().min(1).optional() })
      .refine((v) => (v.until === undefined) === (v.out === undefined), { path: ['until'], message: 'and --out go together' }),
  },
  seal: { options: {}, schema: z.object({}) },
  verify: verifyCommand,
  audit: auditCommand,
  scavenge: { options: { threads: { type: 'string' } }, schema: z.object({ threads: Threads.optional() }) },
  status: { options: {}, schema: z.object({}) },
} satisfies Record<string, { options: Record<string, { type: 'string' }>; schema: z.ZodType }>;

type Commands = typeof COMMANDS;
type Parsed = { [K in keyof Commands]: { command: K; values: z.output<Commands[K]['schema']> } }[keyof Commands];
const isCommand = (name: string): name is keyof Commands => Object.hasOwn(COMMANDS, name);

/** Parses argv into a command and its validated options; throws UsageError. */
function parseCommand(argv: string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === 'help' || command === '--help') throw new UsageError('');
  if (!command) throw new UsageError('a command is required');
  if (!isCommand(command)) throw new UsageError(`unknown command: ${command}`);
  const spec: { options: Record<string, { type: 'string' }>; schema: z.ZodType } = COMMANDS[command];
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: rest, options: spec.options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const parsed = spec.schema.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = issue.path.length ? `--${String(issue.path[0])}` : command;
    const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    throw new UsageError(`${option} ${message}`);
  }
  return { command, values: parsed.data } as Parsed;
}

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
  const [head, checkpoints, lease] = await Promise.all([services.events.headPosition(), services.readModels.checkpoints(), services.readModels.lease(PROJECTOR_LEASE)]);
  const halted = services.projections.halted;
  out(
    JSON.stringify({
      head: String(head),
      projections: projections.map((p) => ({ name: p.name, version: p.version, checkpoint: String(checkpoints.get(checkpointKey(p)) ?? 0n) })),
      halted: halted ? haltView(halted) : null,
      projector: lease ? { holder: lease.holder, expires_at: lease.expiresAt.toISOString() } : null,
    }),
  );
}

/** Answers the exit status when the command has one of its own (verify: 1 on a break). */
async function run(services: Services, { command, values: v }: Parsed, out: Output, err: Output): Promise<unknown> {
  switch (command) {
    case 'seal':
      return seal(services, out);
    case 'verify':
      return verify(services, v, out, err);
    case 'audit':
      return audit(services, v, out);
    case 'create-account':
      return out(JSON.stringify(await openAccount(services, { name: v.name, plan: v.plan, scopes: v.scopes ?? DEFAULT_SCOPES })));
    case 'create-key':
      return out(JSON.stringify(await createKey(services, { accountId: v.account, name: v.name, scopes: v.scopes ?? DEFAULT_SCOPES })));
    case 'revoke-key':
      // The key's account is found through the read models: bring them up to date first.
      await services.projections.catchUp();
      return out(JSON.stringify(await revokeKey(services, v.key)));
    case 'list-keys':
      await services.projections.catchUp();
      return out(JSON.stringify(await listKeys(services, v.account)));
    case 'set-plan':
      return out(JSON.stringify(await changePlan(services, v.account, v.plan)));
    case 'events':
      return printEvents(services, v, out);
    case 'rebuild': {
      if (v.until && v.out) return rebuildAt(services, { until: v.until, out: v.out }, out);
      const started = performance.now();
      const events = await services.projections.rebuild();
      const halted = services.projections.halted;
      if (halted) throw new Error(haltMessage(halted));
      const seconds = (performance.now() - started) / 1000;
      return out(JSON.stringify({ rebuilt: true, events, seconds: Number(seconds.toFixed(3)) }));
    }
    case 'scavenge':
      // Erasure already did this; again here for one a reader held up (the store warns then).
      await Promise.all([services.events.expunge(), services.readModels.expunge()]);
      return out(JSON.stringify({ store: services.events.kind, scavenge_id: null, needed: false, reason: 'the embedded store overwrites erased events when it erases them' }));
    case 'status':
      return printStatus(services, out);
  }
}

/**
 * The scavenge of KurrentDB goes to its nodes' HTTP endpoint, so it needs
 * neither the gRPC connection nor the read models: the stores stay closed.
 */
async function scavengeKurrent(url: string, threads: number | undefined, out: Output): Promise<void> {
  for (const request of scavengeRequests(url, threads === undefined ? {} : { threads })) {
    out(JSON.stringify({ node: request.node, scavenge_id: await startScavenge(request) }));
  }
}

/** Runs one CLI invocation and answers its exit status. */
async function admin(argv: string[], env: NodeJS.ProcessEnv, out: Output, err: Output): Promise<number> {
  let parsed;
  try {
    parsed = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(error.message ? `admin: ${error.message}\n\n${USAGE}` : USAGE);
    return error.message ? 2 : 0;
  }
  let config: Config;
  try {
    // The CLI counts no requests, so it does not need Redis (nor to wait for one that is down).
    config = { ...loadConfig(env), REDIS_URL: undefined };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    err(error.message);
    return 1;
  }
  if (parsed.command === 'scavenge' && config.EVENTSTORE_URL) {
    try {
      await scavengeKurrent(config.EVENTSTORE_URL, parsed.values.threads, out);
      return 0;
    } catch (error) {
      err(`admin: ${(error as Error).message}`);
      return 1;
    }
  }
  let services: Services;
  try {
    services = await openServices(config, { logger: createLogger({ LOG_LEVEL: 'warn' }, process.stderr) });
  } catch (error) {
    err(`admin: could not open the stores: ${(error as Error).message}`);
    return 1;
  }
  try {
    const status = await run(services, parsed, out, err);
    return typeof status === 'number' ? status : 0;
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500) {
      err(`admin: ${error.message}`);
      return 2;
    }
    err(`admin: ${(error as Error).message}`);
    return 1;
  } finally {
    await services.close();
  }
}

process.exitCode = await admin(
  process.argv.slice(2),
  process.env,
  (line) => process.stdout.write(`${line}\n`),
  (line) => process.stderr.write(`${line}\n`),
);
