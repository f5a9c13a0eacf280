/**
 * What each admin command takes and does: its options, the schema their
 * values must pass, and its job. Loaded only once a command is named (the
 * help needs none of it): this is where the stores and the domain come in.
 */
import { z } from 'zod';
import { changePlan, createKey, listKeys, openAccount, revokeKey } from '../accounts/commands.js';
import { checkpointKey } from '../kernel/feed/projection.js';
import { projections } from '../../projections/index.js';
import { haltMessage, haltView } from '../kernel/feed/halt.js';
import { Plan, Scope, DEFAULT_SCOPES } from '../accounts/plans.js';
import { BaseUrl, type Config } from '../config.js';
import { isoInstant } from '../kernel/instant.js';
import { issueLoginLink } from '../dashboard/commands.js';
import { addMember, listMembers, openAccountWithOwner } from '../members/commands.js';
import { Email, Role } from '../members/roles.js';
import { ACCOUNTS } from '../../projections/accounts.js';
import { AppError } from '../kernel/errors.js';
import type { StoredEvent } from '../infra/event-store/port.js';
import { scavengeRequests, startScavenge } from '../infra/event-store/kurrent-scavenge.js';
import { PROJECTOR_LEASE } from '../kernel/feed/lease.js';
import type { Services } from '../services.js';
import { audit, auditCommand } from './audit.js';
import { rebuildAt } from './point-in-time.js';
import { seal, verify, verifyCommand } from './verify.js';
import { encryptExisting } from './encrypt-existing.js';
import { catalog } from '../domain-events.js';
import { lastSeal } from '../seals/process.js';
import { recordedAddress } from '../infra/address.js';
import type { CommandName } from './commands.js';

export type Output = (line: string) => void;

/** What a command's job gets: the configuration, the stores (opened on first use) and stdout. */
export interface Context {
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
export interface CommandSpec<S extends z.ZodType> {
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

/** Every command's options and job, by name. */
export const JOBS: Record<CommandName, CommandSpec<z.ZodType>> = {
  'create-account': command({
    history: 'appends',
    options: [
      { flags: '--name <name>', description: 'the account name' },
      { flags: '--plan <plan>', description: PLANS },
      { flags: '--scopes <list>', description: SCOPE_LIST },
      { flags: '--owner-email <email>', description: 'the address of its first owner, who signs in to the dashboard by email' },
    ],
    schema: z.object({ name: Name, plan: PlanOption, scopes: Scopes.optional(), ownerEmail: Email.optional() }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      const scopes = v.scopes ?? DEFAULT_SCOPES;
      if (v.ownerEmail === undefined) return out(JSON.stringify(await openAccount(services, { name: v.name, plan: v.plan, scopes })));
      const { owner, ...opened } = await openAccountWithOwner(services, { name: v.name, plan: v.plan, scopes, ownerEmail: v.ownerEmail, via: 'account_opened' });
      out(JSON.stringify({ ...opened, owner_email: owner.email, owner_member_id: owner.member_id }));
    },
  }),
  'add-member': command({
    history: 'appends',
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--email <email>', description: 'the member\'s address' },
      { flags: '--role <role>', description: 'owner, admin, editor or viewer' },
    ],
    schema: z.object({ account: Id, email: Email, role: z.enum(Role.options, 'must be owner, admin, editor or viewer') }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      await services.projections.catchUp();
      out(JSON.stringify(await addMember(services, { accountId: v.account, email: v.email, role: v.role })));
    },
  }),
  'list-members': command({
    options: [{ flags: '--account <id>', description: 'the account id (acc_…)' }],
    schema: z.object({ account: Id }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      await services.projections.catchUp();
      if (!(await services.readModels.get(ACCOUNTS, v.account))) throw new AppError('account_not_found', 'no such account');
      out(JSON.stringify(await listMembers(services, v.account)));
    },
  }),
  'create-key': command({
    history: 'appends',
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--name <name>', description: 'a name for the key' },
      { flags: '--scopes <list>', description: SCOPE_LIST },
    ],
    schema: z.object({ account: Id, name: Name, scopes: Scopes.optional() }),
    job: async (v, { stores, out }) => out(JSON.stringify(await createKey(await stores(), { accountId: v.account, name: v.name, scopes: v.scopes ?? DEFAULT_SCOPES }))),
  }),
  'revoke-key': command({
    history: 'appends',
    options: [{ flags: '--key <id>', description: 'the key id (key_…)' }],
    schema: z.object({ key: Id }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      // The key's account is found through the read models: bring them up to date first.
      await services.projections.catchUp();
      out(JSON.stringify(await revokeKey(services, v.key)));
    },
  }),
  'list-keys': command({
    options: [{ flags: '--account <id>', description: 'the account id (acc_…)' }],
    schema: z.object({ account: Id }),
    job: async (v, { stores, out }) => {
      const services = await stores();
      await services.projections.catchUp();
      out(JSON.stringify(await listKeys(services, v.account)));
    },
  }),
  'set-plan': command({
    history: 'appends',
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--plan <plan>', description: PLANS },
    ],
    schema: z.object({ account: Id, plan: PlanOption }),
    job: async (v, { stores, out }) => out(JSON.stringify(await changePlan(await stores(), v.account, v.plan))),
  }),
  'login-link': command({
    history: 'appends',
    options: [
      { flags: '--account <id>', description: 'the account id (acc_…)' },
      { flags: '--base <url>', description: 'where the service is reached (default PUBLIC_BASE_URL, else where the server on DATA_DIR listens)' },
    ],
    schema: z.object({ account: Id, base: BaseUrl.optional() }),
    job: async (v, { config, stores, out }) => {
      // The server's own record of where it listens beats this process's HOST and PORT, which may not be the server's.
      const base = v.base ?? config.PUBLIC_BASE_URL ?? recordedAddress(config.DATA_DIR);
      out(JSON.stringify(await issueLoginLink(await stores(), { accountId: v.account, ...(base ? { base } : {}) })));
    },
  }),
  events: command({
    history: 'reads',
    options: [
      { flags: '--after <position>', description: 'start just after this position (one this command printed)' },
      { flags: '--stream <stream>', description: "only this stream's events" },
      { flags: '--from <revision>', description: 'with --stream: from this revision (0-based, inclusive)' },
    ],
    schema: EventsOptions,
    job: async (v, { stores, out }) => printEvents(await stores(), v, out),
  }),
  rebuild: command({
    history: 'reads',
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
      // The cost as a line: what any rebuild pays, and what each event adds; then, apart, dropping what it replaced.
      const cost = services.projections.lastRebuild;
      const seconds = cost?.seconds ?? (performance.now() - started) / 1000;
      out(
        JSON.stringify({
          rebuilt: true,
          events,
          seconds: Number(seconds.toFixed(3)),
          margin_events_per_second: cost?.marginEventsPerSecond ?? 0,
          fixed_seconds: Number((cost?.fixedSeconds ?? seconds).toFixed(3)),
          dropped_seconds: Number((cost?.droppedSeconds ?? 0).toFixed(3)),
        }),
      );
    },
  }),
  seal: command({
    history: 'appends',
    options: [],
    schema: z.object({}),
    job: async (_v, { stores, out }) => seal(await stores(), out),
  }),
  'encrypt-existing': command({
    history: 'appends',
    options: [{ flags: '--page <n>', description: 'events read and committed at a time, 1 to 10000 (default 500)' }],
    schema: z.object({ page: z.coerce.number().int('must be a whole number from 1 to 10000').min(1, 'must be a whole number from 1 to 10000').max(10_000, 'must be a whole number from 1 to 10000').optional() }),
    job: async (v, { stores, out }) => encryptExisting(await stores(), out, v.page),
  }),
  verify: command({
    history: 'reads',
    options: [{ flags: '--expect <hash>', description: 'a last_seal_hash printed earlier, which the chain must still hold' }],
    schema: verifyCommand.schema,
    job: async (v, { stores, out, err }) => verify(await stores(), v, out, err),
  }),
  audit: command({
    history: 'reads',
    options: [
      { flags: '--object <id>', description: 'the widget, form or poll id' },
      { flags: '--format <format>', description: 'ndjson (default) or table' },
    ],
    schema: auditCommand.schema,
    job: async (v, { stores, out }) => audit(await stores(), v, out),
  }),
  scavenge: command({
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
  status: command({
    history: 'reads',
    options: [],
    schema: z.object({}),
    job: async (_v, { stores, out }) => printStatus(await stores(), out),
  }),
};

/**
 * The scavenge of KurrentDB goes to its nodes' HTTP endpoint, so it needs
 * neither the gRPC connection nor the read models: the stores stay closed.
 */
async function scavengeKurrent(url: string, threads: number | undefined, out: Output): Promise<void> {
  for (const request of scavengeRequests(url, threads === undefined ? {} : { threads })) {
    out(JSON.stringify({ node: request.node, scavenge_id: await startScavenge(request) }));
  }
}

