/**
 * A submission answers only once the key its content is sealed under is
 * durable, whether its id came with a key stored ahead (many submissions a
 * second) or not: a second connection to keys.db, as another process or a
 * restart would open it, finds the key of every response and vote the
 * moment its reply arrives. The salts stored ahead and never used are gone
 * once the server stops.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { KEYS_FILE } from '../../src/infra/subject-keys/port.js';
import { openSqliteSubjectKeys } from '../../src/infra/subject-keys/sqlite.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { tempDir } from '../support/services.js';

t.test('every response and vote answered has its key in keys.db as its reply arrives; unused keys are deleted on close', async (t) => {
  const dir = tempDir(t);
  const { app, services } = await testApp(t, { dataDir: dir });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const poll = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] } })).json();
  await app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload: { published: true } });
  const [widgetToken, pollToken] = [await tokenFor(app, 'widgets', widget), await tokenFor(app, 'polls', poll.id)];

  const onDisk = async (subject: string) => {
    const reader = openSqliteSubjectKeys(dir, { readonly: true });
    try {
      return (await reader.find([subject])).has(subject);
    } finally {
      await reader.close();
    }
  };
  const durable: string[] = [];
  const missing: string[] = [];
  const check = async (id: string) => ((await onDisk(id)) ? durable : missing).push(id);
  // Many at once, as a busy widget gets them: far above the rate from which ids come with their keys stored ahead.
  await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1 + (i % 5), comment: `answer ${i}` }, _token: widgetToken } });
      t.equal(reply.statusCode, 200, reply.body);
      await check(reply.json().id);
    }),
  );
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const reply = await app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, payload: { option_ids: [poll.options[i % 2].id], _token: pollToken, metadata: { fingerprint: `voter-${i}` } } });
      t.equal(reply.statusCode, 200, reply.body);
    }),
  );
  t.same(missing, [], 'no response answered before its key was in the file');
  t.equal(durable.length, 60);
  const votes = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'VoteCast').map((e) => String(e.data.vote_id));
  t.equal(votes.length, 30);
  for (const id of votes) t.ok(await onDisk(id), `vote ${id} has its key`);

  const listed = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses?limit=100`, headers: biz.headers })).json();
  t.equal(listed.responses.length, 60, 'every response reads back');
  t.same(new Set(listed.responses.map((r: { answers: { comment: string } }) => r.answers.comment)).size, 60);

  await app.close();
  await services.close();
  const file = new Database(join(dir, KEYS_FILE), { readonly: true });
  const subjects = (file.prepare('SELECT subject FROM subject_keys').all() as Array<{ subject: string }>).map((row) => row.subject).sort();
  file.close();
  t.same(subjects, [...durable, ...votes, 'secret-check'].sort(), 'stopped, keys.db holds the keys of what was stored and the check of SECRET, and no other');
});
