/**
 * given / when / then over HTTP: the app built on stores that already hold
 * the given events, so an API test states where it starts as the facts the
 * service would have recorded, not as the requests that would record them.
 *
 *   const shop = anAccount('pro');
 *   const survey = aForm(shop, { title: 'Survey', questions: [...] }, { published: true });
 *   const { app } = await given(t, [...shop.events, ...survey.events]);
 *   const reply = await app.inject({ method: 'GET', url: `/api/forms/${survey.id}`, headers: shop.headers });
 *
 * Every event is checked against the current version of its type by the event
 * catalog and appended to its stream with the expected revision, as a command
 * appends it; the read models have caught up with all of them before the app
 * answers. The builders below make their events with the feature's own pure
 * decider, so they are what a request would have recorded, in today's shapes.
 */
import type { Test } from 'tap';
import { account } from '../../src/accounts/account.js';
import { generateApiKey } from '../../src/accounts/api-keys.js';
import { apiKey } from '../../src/accounts/key.js';
import type { Plan, Scope } from '../../src/accounts/plans.js';
import type { App } from '../../src/app.js';
import type { DomainEvent } from '../../src/domain-events.js';
import { form } from '../../src/forms/form.js';
import { CreateFormBody } from '../../src/forms/schemas.js';
import { createIdGenerator, secureRandom } from '../../src/infra/ids.js';
import type { ExpectedRevision } from '../../src/infra/event-store/port.js';
import type { Aggregate } from '../../src/kernel/aggregate.js';
import type { Services } from '../../src/services.js';
import { widget } from '../../src/widgets/widget.js';
import { CreateWidgetBody } from '../../src/widgets/schemas.js';
import { ALL_SCOPES, testApp, type Owner, type TestAppOptions } from './app.js';

/** One recorded fact: a domain event of the current version, in its stream. */
export type GivenEvent = DomainEvent & {
  stream: string;
  /** When the command that made it ran (default: GIVEN_AT). */
  at?: string;
  /** Who caused it (default: `cli`). */
  actor?: string;
};

/** The moment the builders' events happen at unless told otherwise. */
export const GIVEN_AT = '2026-11-22T09:00:00.000Z';

const ids = createIdGenerator();

/**
 * The app, as testApp builds it, on stores holding `history`: appended in its
 * order, each run of events of one stream in one append, the read models
 * caught up with the last of them before the app starts.
 */
export async function given(t: Test, history: GivenEvent[], options: TestAppOptions = {}): Promise<{ app: App; services: Services }> {
  return testApp(t, { ...options, before: (services) => record(services, history) });
}

/** Appends the events as commands append theirs (serialised by the catalog, with expected revisions) and runs the projections over them. */
export async function record(services: Services, history: GivenEvent[]): Promise<void> {
  const revisions = new Map<string, bigint>();
  for (let i = 0; i < history.length; ) {
    const stream = history[i]!.stream;
    let end = i;
    while (end < history.length && history[end]!.stream === stream) end++;
    const events = history.slice(i, end).map(({ stream: _, at, actor, ...event }) =>
      services.catalog.serialize(event as DomainEvent, { occurred_at: at ?? GIVEN_AT, actor: actor ?? 'cli' }),
    );
    const state = revisions.get(stream) ?? (await services.events.streamState(stream));
    const expected: ExpectedRevision = state === 'deleted' ? 'any' : state;
    const { nextRevision } = await services.events.append(stream, events, expected);
    revisions.set(stream, nextRevision);
    i = end;
  }
  await services.projections.catchUp();
}

/** The events an aggregate decides for these commands, one after the other, each in the aggregate's stream. */
function decided<S, E extends DomainEvent, C>(aggregate: Aggregate<S, E, C>, id: string, commands: C[], state = aggregate.initial()): GivenEvent[] {
  const out: GivenEvent[] = [];
  for (const command of commands) {
    const events = aggregate.decide(command, state);
    state = events.reduce(aggregate.evolve, state);
    out.push(...events.map((event) => ({ ...event, stream: aggregate.streamId(id) }) as GivenEvent));
  }
  return out;
}

export interface GivenAccount extends Owner {
  plan: Plan;
  events: GivenEvent[];
}

/** An open account with its first API key (whose secret `key` and `headers` carry), as `create-account` makes it. */
export function anAccount(plan: Plan = 'business', scopes: Scope[] = ALL_SCOPES, at = GIVEN_AT): GivenAccount {
  const accountId = ids('acc');
  const secret = generateApiKey(secureRandom);
  const key = { key_id: ids('key'), name: 'default', key_hash: secret.hash, prefix: secret.prefix, scopes };
  const events = decided(account, accountId, [{ type: 'OpenAccount', account_id: accountId, name: `${plan} owner`, plan, key, at }]);
  return { accountId, keyId: key.key_id, key: secret.key, headers: { authorization: `Bearer ${secret.key}` }, plan, events };
}

/** `count` more API keys of the account, each in its own stream, as the dashboard's key page makes them; their ids in order. */
export function apiKeys(owner: Pick<Owner, 'accountId'>, count: number, scopes: Scope[] = ALL_SCOPES, at = GIVEN_AT): { ids: string[]; events: GivenEvent[] } {
  const made = Array.from({ length: count }, (_, i) => {
    const secret = generateApiKey(secureRandom);
    const key = { key_id: ids('key'), name: `key ${i + 2}`, key_hash: secret.hash, prefix: secret.prefix, scopes };
    return { id: key.key_id, events: decided(apiKey, key.key_id, [{ type: 'IssueApiKey', account_id: owner.accountId, key, active_keys: 0, at }]) };
  });
  return { ids: made.map((key) => key.id), events: made.flatMap((key) => key.events) };
}

/** A form of the owner made from the body a POST /api/forms would send (read by its schema, as the route reads it), published when told. */
export function aForm(owner: Pick<Owner, 'accountId'>, sent: object, { published = false, at = GIVEN_AT } = {}): { id: string; events: GivenEvent[] } {
  const id = ids('frm');
  const account_id = owner.accountId;
  return {
    id,
    events: decided(form, id, [
      { type: 'CreateForm', form_id: id, account_id, body: CreateFormBody.parse(sent), at },
      ...(published ? [{ type: 'UpdateForm' as const, account_id, body: { published: true }, at }] : []),
    ]),
  };
}

/** A widget of the owner made from the body a POST /api/widgets would send (read by its schema, as the route reads it), published when told. */
export function aWidget(owner: Pick<Owner, 'accountId'>, sent: object, { published = false, at = GIVEN_AT } = {}): { id: string; events: GivenEvent[] } {
  const id = ids('wgt');
  const account_id = owner.accountId;
  return {
    id,
    events: decided(widget, id, [
      { type: 'CreateWidget', widget_id: id, account_id, body: CreateWidgetBody.parse(sent), at },
      ...(published ? [{ type: 'UpdateWidget' as const, account_id, body: { published: true }, at }] : []),
    ]),
  };
}
