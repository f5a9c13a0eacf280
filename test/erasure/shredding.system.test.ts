/**
 * Crypto-shredding with a running server: a response's answer is in no file
 * under DATA_DIR while the API serves it; erasing it deletes its key, so a
 * raw copy of the store taken before holds ciphertext that nothing can open,
 * and a point-in-time copy made before can no longer read it; the sealed
 * history still verifies and a rebuild gives the same list.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { personalData } from '../../src/domain-events.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { KEYS_FILE } from '../../src/infra/subject-keys/port.js';
import { openSqliteSubjectKeys } from '../../src/infra/subject-keys/sqlite.js';
import { PersonalCodec } from '../../src/kernel/personal.js';
import { PersonalEventStore } from '../../src/kernel/personal-store.js';
import { eventually } from '../support/eventually.js';
import { admin, json, startServer } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const SECRET = 'shredding-test-secret-of-at-least-32-characters';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

const holding = (files: string[], needle: string | Buffer): string[] => files.filter((file) => readFileSync(file).includes(needle));

t.test('an answer is sealed at rest, and erasing it leaves no copy that can read it', async (t) => {
  const dir = tempDir(t);
  const env = { DATA_DIR: dir, SECRET };
  const server = await startServer(env);
  t.teardown(() => server.stop('SIGKILL'));
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business', '--scopes', 'forms:read,forms:write,responses:read,responses:write'], env));
  const headers = { authorization: `Bearer ${opened.api_key}`, 'content-type': 'application/json' };
  t.ok(await eventually(async () => (await fetch(`${server.url}/api/widgets`, { headers })).status === 200, { everyMs: 100 }));
  const widget = (await (await fetch(`${server.url}/api/widgets`, { method: 'POST', headers, body: JSON.stringify({ widget_type: 'feedback', title: 'Rate us' }) })).json()) as { id: string };
  t.equal((await fetch(`${server.url}/api/widgets/${widget.id}`, { method: 'PUT', headers, body: JSON.stringify({ published: true }) })).status, 200);
  const token = async () => ((await (await fetch(`${server.url}/api/widgets/${widget.id}/token`)).json()) as { token: string }).token;
  const submit = async (text: string) => {
    const reply = await fetch(`${server.url}/api/widgets/${widget.id}/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answers: { rating: 4, comment: text }, _token: await token() }) });
    t.equal(reply.status, 200, await reply.clone().text());
    return ((await reply.json()) as { id: string }).id;
  };
  const answer = `ANSWER-${randomBytes(8).toString('hex')}`;
  const keptAnswer = `KEPT-${randomBytes(8).toString('hex')}`;
  const id = await submit(answer);
  await submit(keptAnswer);
  const list = async (base = server.url) => (await fetch(`${base}/api/widgets/${widget.id}/responses?limit=100`, { headers })).text();

  t.ok((await list()).includes(answer), 'the API serves the answer');
  const files = filesUnder(dir);
  t.ok(files.some((file) => file.endsWith(`${DATABASE_FILE}-wal`)) || files.some((file) => file.endsWith(DATABASE_FILE)), 'the store files are there');
  t.ok(holding(files, id).length > 0, 'the scan finds the response id, stored plain');
  t.same(holding(files, answer), [], 'while no file under DATA_DIR (the write-ahead log included) holds its text');

  // A raw copy of the files, as a backup or a stolen disk would hold them, taken before the erasure.
  const raw = tempDir(t, 'raw');
  for (const name of [DATABASE_FILE, `${DATABASE_FILE}-wal`, KEYS_FILE, `${KEYS_FILE}-wal`]) if (existsSync(join(dir, name))) copyFileSync(join(dir, name), join(raw, name));
  const oldKeys = openSqliteSubjectKeys(raw, { readonly: true });
  const salt = (await oldKeys.find([id])).get(id);
  await oldKeys.close();
  t.ok(salt, 'the copy of the key file held its salt');
  t.same(holding(filesUnder(raw).filter((file) => file.includes(KEYS_FILE)), answer), [], 'the key files hold no answer');

  // A point-in-time copy made before the erasure, served read-only beside the live one.
  const pit = join(tempDir(t, 'pit'), 'store');
  mkdirSync(pit, { recursive: true });
  t.equal((await admin(['rebuild', '--until', new Date().toISOString(), '--out', pit], env)).code, 0);
  const copy = await startServer({ DATA_DIR: pit, SECRET });
  t.teardown(() => copy.stop('SIGKILL'));
  t.ok((await list(copy.url)).includes(answer), 'the copy reads the answer before the erasure');

  // Sealed into the hash chain as stored, so that verify after the erasure checks the chain over sealed content.
  t.equal((await admin(['seal'], env)).code, 0);
  const before = JSON.parse(await list()) as { responses: unknown[] };
  const erased = await fetch(`${server.url}/api/responses`, { method: 'DELETE', headers, body: JSON.stringify({ widgetId: widget.id, ids: [id] }) });
  t.equal(erased.status, 200, await erased.clone().text());
  t.ok(await eventually(async () => !(await list()).includes(answer), { everyMs: 100 }), 'the erased answer is no longer served');
  t.ok((await list()).includes(keptAnswer), 'the other one is');

  t.notOk((await list(copy.url)).includes(answer), 'the point-in-time copy made before cannot read it any more');
  t.ok((await list(copy.url)).includes(keptAnswer), 'while it reads what was not erased');

  t.same(holding(filesUnder(dir), salt!), [], 'no file under DATA_DIR holds its key');
  t.same(holding([join(raw, DATABASE_FILE), ...(existsSync(join(raw, `${DATABASE_FILE}-wal`)) ? [join(raw, `${DATABASE_FILE}-wal`)] : [])], answer), [], 'the raw copy holds no plain answer');
  // The raw copy opened with the live keys: the response's events are there, sealed, and read as erased.
  const rawEvents = openSqliteEventStore(raw);
  const records = await rawEvents.readFeed({ limit: 1000 });
  const sealed = records.find((record) => record.streamId.endsWith(id) && record.type === 'ResponseSubmitted');
  t.ok(sealed && JSON.parse(sealed.data).sealed?.key === id, 'the raw copy holds the response, sealed under its key');
  const liveKeys = openSqliteSubjectKeys(dir, { readonly: true, path: join(dir, KEYS_FILE) });
  const reader = new PersonalEventStore(rawEvents, new PersonalCodec(personalData, liveKeys, SECRET));
  t.same(await reader.readStream(sealed!.streamId), [], 'and nothing can open it: its key is gone');
  await reader.close();

  const verified = await admin(['verify'], env);
  t.equal(verified.code, 0, `verify passes: ${verified.stdout}${verified.stderr}`);
  t.match(json(verified), { verified: true, erased: 1 }, 'with the erased response counted as erased, its hash in the chain');
  t.ok(json(verified).sealed > 0);
  const rebuilt = await admin(['rebuild'], env);
  t.equal(rebuilt.code, 0, rebuilt.stderr);
  const after = JSON.parse(await list()) as { responses: unknown[] };
  t.same(after.responses, (before.responses as Array<{ id: string }>).filter((r) => r.id !== id), 'a rebuild gives the same list as before, less the erased one');
});
