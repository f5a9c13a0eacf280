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
 *
 * Only commander is loaded up front: the help, and a command name mistyped,
 * answer without the schemas, the domain or the stores, which come in
 * (jobs.ts) once a command is named.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { Command, CommanderError } from 'commander';
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import { COMMANDS, isCommand, type CommandName } from './commands.js';
import type { CommandSpec, Context, Output } from './jobs.js';

/** Where one invocation reads its environment and writes its lines (without their newline). */
export interface Io {
  stdout: Output;
  stderr: Output;
  env: NodeJS.ProcessEnv;
}

/** Bad arguments: exit 2, one line on stderr. */
class UsageError extends Error {}
/** Stdout's reader went away: nothing more to say, and nothing wrong. Thrown by an `Io.stdout` to stop the job. */
export class OutputClosed extends Error {}
class StoresUnavailable extends Error {}

/** The options' values as the command's schema takes them, or the one thing wrong with them. */
function validate(name: CommandName, spec: CommandSpec<z.ZodType>, values: Record<string, unknown>): unknown {
  const parsed = spec.schema.safeParse(values);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // Commander names `--owner-email` ownerEmail: told back as typed.
  const option = issue.path.length ? String(issue.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`) : undefined;
  if (option === undefined) throw new UsageError(`${name}: ${issue.message}`);
  if (values[String(issue.path[0])] === undefined) {
    const hint = spec.options.find((o) => o.flags.startsWith(`--${option} `))?.description;
    throw new UsageError(`missing --${option}${hint ? ` (${hint})` : ''}`);
  }
  throw new UsageError(`--${option} ${plainly(issue)}`);
}

/** An issue in the words of the other refusals: a schema's own message as it is, zod's defaults ("Too small: expected…") reworded. */
function plainly(issue: z.core.$ZodIssue): string {
  if (!/^(Invalid|Too small|Too big)/.test(issue.message)) return issue.message;
  const unit = 'origin' in issue && issue.origin === 'string' ? ' characters' : '';
  switch (issue.code) {
    case 'invalid_type':
      return `must be a ${issue.expected === 'int' ? 'whole number' : issue.expected}`;
    case 'too_small':
      return unit && Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${issue.minimum}${unit}`;
    case 'too_big':
      return `must be at most ${issue.maximum}${unit}`;
    default:
      return issue.message;
  }
}

/** Commander's refusals, in this command's words. */
function reworded(error: CommanderError, argv: string[]): string {
  const name = isCommand(argv[0]) ? argv[0] : undefined;
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
  name: CommandName;
  spec: CommandSpec<z.ZodType>;
  run(context: Context): Promise<void | number>;
}

async function parse(argv: string[], write: { out: (text: string) => void; err: (text: string) => void }): Promise<Chosen | undefined> {
  // Options and schemas only when a command is named: `admin --help` lists names and descriptions.
  const jobs = argv.some(isCommand) ? (await import('./jobs.js')).JOBS : undefined;
  let chosen: Chosen | undefined;
  const program = new Command('admin')
    .usage('<command> [options]')
    .description('Provisioning, the audit feed and maintenance, on the stores the server uses (same environment: DATA_DIR or the store URLs, and SECRET).')
    .exitOverride()
    .configureOutput({ writeOut: write.out, writeErr: write.err, outputError: () => {} })
    .addHelpText('after', '\nEach command prints JSON on stdout. `admin <command> --help` lists its options.');
  for (const { name, description } of COMMANDS) {
    const cli = program.command(name).description(description);
    const spec = jobs?.[name];
    if (!spec) continue;
    for (const option of spec.options) cli.option(option.flags, option.description);
    cli.action((options: Record<string, unknown>) => {
      const values = validate(name, spec, options);
      chosen = { name, spec, run: (context) => spec.job(values, context) };
    });
  }
  if (argv.length === 0) {
    write.err('admin: a command is required\n\n');
    program.outputHelp({ error: true });
    throw new UsageError('');
  }
  // An option given twice would keep its last value without a word (`--plan free --plan pro`): which was meant is not ours to guess.
  const given = new Set<string>();
  for (const arg of argv.slice(1)) {
    if (!arg.startsWith('--') || arg === '--') continue;
    const flag = arg.split('=')[0]!;
    if (given.has(flag)) throw new UsageError(`${flag} is given twice: give it once`);
    given.add(flag);
  }
  // Help for a command that is not there (`help bogus`, `creat-account --help`) is its refusal, with the suggestion.
  const unknown = argv[0] === 'help' ? argv[1] : argv[0];
  if (unknown !== undefined && !unknown.startsWith('-') && !isCommand(unknown) && (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h'))) argv = [unknown];
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

/** A stream for the stores' log lines, written as lines to `stderr`. */
const lines = (write: Output) =>
  new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) write(line);
      done();
    },
  });

/**
 * Runs one CLI invocation and answers its exit status. The environment is
 * `io.env` only (never this process's), and every line goes to `io`, so that
 * it runs as well inside another program as in its own process.
 */
export async function run(argv: string[], io: Io): Promise<number> {
  const { stdout: out, stderr: err, env } = io;
  let job: Chosen | undefined;
  try {
    job = await parse(argv, { out: (text) => out(text.replace(/\n$/, '')), err: (text) => err(text.replace(/\n$/, '')) });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) err(`admin: ${error.message}`);
    return 2;
  }
  if (!job) return 0;
  const [{ ConfigError, loadConfig }, { AppError }] = await Promise.all([import('../config.js'), import('../kernel/errors.js')]);
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
  // A reading command on a store without its secret runs on one of its own (checkDataDir): nothing may keep it.
  let oneRunSecret = false;
  if (!config.EVENTSTORE_URL) {
    const refused = await checkDataDir(job, config, err);
    if (typeof refused === 'number') return refused;
    oneRunSecret = config.SECRET === undefined && refused.SECRET !== undefined;
    config = refused;
  }
  let services: Services | undefined;
  const stores = async () => {
    try {
      const { createLogger, openServices } = await import('../services.js');
      services ??= await openServices(config, { logger: createLogger({ LOG_LEVEL: 'warn' }, lines(err)), oneRunSecret });
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

/**
 * Refuses, with its exit status, a DATA_DIR the command cannot use; answers
 * the configuration to run with otherwise.
 */
async function checkDataDir(job: Chosen, config: Config, err: Output): Promise<Config | number> {
  const [{ DATABASE_FILE, holdsTable }, { SECRET_FILE }, { readPointInTime, UnreadableMark }] = await Promise.all([
    import('../infra/sqlite.js'),
    import('../infra/secret.js'),
    import('../seals/point-in-time.js'),
  ]);
  const file = join(config.DATA_DIR, DATABASE_FILE);
  if (job.spec.history === 'reads' && !existsSync(file)) {
    err(`admin: no store in DATA_DIR ${resolve(config.DATA_DIR)} (${job.name} reads an existing history; is the path right?)`);
    return 1;
  }
  // SQLite takes an empty file for an empty database, which would verify: a truncated store is not one that holds nothing.
  if (job.spec.history === 'reads' && statSync(file).size === 0) {
    err(`admin: ${resolve(file)} is empty (0 bytes), not a store: ${job.name} reads an existing history`);
    return 1;
  }
  // Opening it would make the tables anew, and a wiped or another program's file would read as an empty history.
  if (job.spec.history === 'reads' && holdsTable(file, 'events') === false) {
    err(`admin: ${resolve(file)} holds no event store (no events table): ${job.name} reads an existing history`);
    return 1;
  }
  // A reading command makes nothing in DATA_DIR: without the secret there, it runs on one of its own, as it signs nothing that outlives it.
  if (job.spec.history === 'reads' && !config.SECRET && !existsSync(join(config.DATA_DIR, SECRET_FILE))) {
    config = { ...config, SECRET: randomBytes(32).toString('base64url') };
  }
  let pointInTime;
  try {
    pointInTime = job.spec.history === 'appends' ? readPointInTime(config.DATA_DIR) : undefined;
  } catch (error) {
    if (!(error instanceof UnreadableMark)) throw error;
    err(`admin: ${error.message}`);
    return 1;
  }
  if (pointInTime) {
    err(`admin: ${job.name}: DATA_DIR holds the history as of ${pointInTime.until}, which is read-only`);
    return 2;
  }
  return config;
}
