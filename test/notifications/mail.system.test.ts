/**
 * Notifications from a real server process through a real SMTP server (the
 * smtp-server package, started by the test) and to a local HTTP server
 * standing for Slack: responses recorded, the server killed with SIGKILL
 * before their batch was due, and after the restart one email for one
 * response, one for ten, one Slack message; then the one-click unsubscribe
 * (POST), after which no more mail comes.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import t from 'tap';
import type { Page } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { eventually } from '../support/eventually.js';
import { linkIn, smtpCatcher, type CaughtMail } from '../support/mail.js';
import { admin, json, startServer } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const same = { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' };

/** Signs in by email over HTTP: the headers of the dashboard's requests. */
async function signIn(base: string, smtp: { mails: CaughtMail[]; waitFor(count: number): Promise<CaughtMail[]> }, email: string) {
  const before = smtp.mails.length;
  await fetch(`${base}/dashboard/sign-in`, { method: 'POST', headers: same, body: JSON.stringify({ email }) });
  const mails = await smtp.waitFor(before + 1);
  const token = new URL(linkIn(mails[before]!.text, '/dashboard/login')).searchParams.get('t')!;
  const login = await fetch(`${base}/dashboard/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, body: new URLSearchParams({ t: token }).toString() });
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('fs_session='))!.split(';')[0]!;
  const session = (await (await fetch(`${base}/dashboard/api/session`, { headers: { cookie } })).json()) as { csrf_token: string };
  return { cookie, ...same, 'x-csrf-token': session.csrf_token };
}

t.test('kill -9 before a batch was due loses nothing; one email for one response, one for ten, Slack; one-click unsubscribe', async (t) => {
  const smtp = await smtpCatcher(t);
  const slack: string[] = [];
  const hook = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      slack.push(body);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => hook.close(() => resolve())));
  const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/services/T000/B000/XXXX`;

  const dir = tempDir(t);
  // WEBHOOK_ALLOW_PRIVATE: the test's Slack listens on the loopback address.
  const env = { DATA_DIR: dir, SMTP_URL: smtp.url, WEBHOOK_ALLOW_PRIVATE: 'true' };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business', '--scopes', 'forms:read,forms:write,responses:read,responses:write', '--owner-email', 'owner@example.com'], env));
  const api = { authorization: `Bearer ${opened.api_key}`, 'content-type': 'application/json' };
  const first = await startServer(env);
  let base = first.url;
  const forms: string[] = [];
  for (const title of ['One', 'Ten']) {
    const created = (await (await fetch(`${base}/api/forms`, { method: 'POST', headers: api, body: JSON.stringify({ title, questions: [{ id: 'name', type: 'short_text', title: 'Your name' }] }) })).json()) as { id: string };
    await fetch(`${base}/api/forms/${created.id}`, { method: 'PUT', headers: api, body: JSON.stringify({ published: true }) });
    forms.push(created.id);
  }
  const [one, ten] = forms as [string, string];
  const owner = await signIn(base, smtp, 'owner@example.com');
  for (const id of forms) {
    const chosen = await fetch(`${base}/dashboard/api/forms/${id}/notifications`, { method: 'PUT', headers: owner, body: JSON.stringify({ mode: 'each' }) });
    t.equal(chosen.status, 200, await chosen.text());
  }
  t.equal((await fetch(`${base}/dashboard/api/forms/${ten}/notifications/slack`, { method: 'PUT', headers: owner, body: JSON.stringify({ url: hookUrl }) })).status, 200);

  const submit = async (id: string, name: string) => {
    const { token } = (await (await fetch(`${base}/api/forms/${id}/token`)).json()) as { token: string };
    const reply = await fetch(`${base}/api/forms/${id}/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': UA }, body: JSON.stringify({ answers: { name }, _token: token }) });
    t.equal(reply.status, 200);
  };
  const signInMails = smtp.mails.length;
  await submit(one, 'Ada');
  await Promise.all(Array.from({ length: 10 }, (_, i) => submit(ten, `Visitor ${i}`)));
  // Recorded; the batch waits for others that arrive with it, and the process dies meanwhile.
  first.signal('SIGKILL');
  await first.stop().catch(() => undefined);

  const second = await startServer(env);
  t.teardown(() => second.stop());
  base = second.url;
  const mails = (await smtp.waitFor(signInMails + 2)).slice(signInMails);
  t.ok(await eventually(() => slack.length === 1), 'Slack got a POST');
  const subjects = mails.map((m) => /^Subject: (.*)$/m.exec(m.raw)![1]).sort();
  t.same(subjects, ['New: 1 response to One', 'New: 10 responses to Ten'], 'one email each: the ten batched');
  t.match(JSON.parse(slack[0]!), { text: /^10 new responses to \*Ten\*/ });
  const oneMail = mails.find((m) => /to One/.test(m.raw))!;
  t.match(oneMail.raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
  // Long headers are folded onto lines that start with white space.
  const unsubscribe = /^List-Unsubscribe:\s*<([^>]+)>/m.exec(oneMail.raw.replace(/\r?\n[ \t]+/g, ' '))![1]!;
  t.match(new URL(unsubscribe).pathname, '/notifications/unsubscribe');
  // The test's servers take a new port at each start: the link's path and token, at the one serving now.
  const link = `${base}${new URL(unsubscribe).pathname}${new URL(unsubscribe).search}`;

  // RFC 8058: the mail client POSTs the body, with no cookie.
  const clicked = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  t.equal(clicked.status, 200);
  // That no mail follows is shown in the service's own process, on a clock it
  // can move a minute on (notifications.test.ts); here, that the click was taken.
  const chosen = (await (await fetch(`${base}/dashboard/api/forms/${one}/notifications`, { headers: owner })).json()) as { mine?: unknown };
  t.match(chosen.mine, { mode: 'none' }, 'no more mail about the object unsubscribed from');
});

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = `${ARTIFACTS}notifications/`;

async function axe(tab: Page): Promise<string[]> {
  if (!(await tab.evaluate('typeof window.axe === "object"'))) await tab.evaluate(AXE);
  const violations = (await tab.evaluate(
    'axe.run(document, { preload: false, resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

if (!existsSync(CHROMIUM)) {
  t.skip(`browser part skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('the object page in Chromium: a member chooses a digest, an admin sets Slack; the unsubscribe page', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const smtp = await smtpCatcher(t);
    const env = { DATA_DIR: tempDir(t), SMTP_URL: smtp.url };
    const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business', '--scopes', 'forms:read,forms:write,responses:read,responses:write', '--owner-email', 'owner@example.com'], env));
    const server = await startServer(env);
    t.teardown(() => server.stop());
    const api = { authorization: `Bearer ${opened.api_key}`, 'content-type': 'application/json' };
    const { id } = (await (await fetch(`${server.url}/api/forms`, { method: 'POST', headers: api, body: JSON.stringify({ title: 'Signup', questions: [{ id: 'name', type: 'short_text', title: 'Your name' }] }) })).json()) as { id: string };
    const browser = await launch(t);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(120_000);
    t.teardown(() => context.close());
    const tab = await context.newPage();
    await fetch(`${server.url}/dashboard/sign-in`, { method: 'POST', headers: same, body: JSON.stringify({ email: 'owner@example.com' }) });
    const [mail] = await smtp.waitFor(1);
    await tab.goto(linkIn(mail!.text, '/dashboard/login'));
    await tab.getByRole('button', { name: 'Sign in to Acme' }).click();
    await tab.waitForURL(`${server.url}/dashboard`);
    await tab.goto(`${server.url}/dashboard/forms/${id}`);
    await tab.getByRole('heading', { name: 'Notifications' }).waitFor();
    await tab.getByLabel(/^Email me/).selectOption('digest');
    await tab.getByLabel('Digest hour').selectOption('8');
    await tab.getByLabel('Time zone').selectOption('Europe/Berlin');
    await tab.getByLabel('Include the answers').check();
    await tab.getByRole('button', { name: 'Save my notifications' }).click();
    await tab.getByText('Saved.').waitFor();
    await tab.getByLabel('Slack incoming webhook').fill('https://hooks.slack.com/services/T000/B000/XXXX');
    await tab.getByRole('button', { name: 'Save Slack address' }).click();
    await tab.getByText('Saved.').waitFor();
    t.same(await axe(tab), [], 'the object page with its notifications: axe clean');
    await tab.getByRole('heading', { name: 'Notifications' }).scrollIntoViewIfNeeded();
    await tab.screenshot({ path: `${SHOTS}object-notifications.png` });
    t.match(await tab.evaluate(`fetch('/dashboard/api/forms/${id}/notifications').then((r) => r.json())`), {
      mine: { mode: 'digest', digest_hour: 8, time_zone: 'Europe/Berlin', include_answers: true },
      slack_url: 'https://hooks.slack.com/services/T000/B000/XXXX',
    });

    // The page an unsubscribe link opens in a browser: a button, then the confirmation.
    const chosen = await tab.evaluate(`fetch('/dashboard/api/forms/${id}/notifications', { method: 'PUT', headers: { 'content-type': 'application/json', 'x-csrf-token': document.querySelector('meta[name=csrf-token]').content }, body: JSON.stringify({ mode: 'each' }) }).then((r) => r.status)`);
    t.equal(chosen, 200);
    await fetch(`${server.url}/api/forms/${id}`, { method: 'PUT', headers: api, body: JSON.stringify({ published: true }) });
    const { token } = (await (await fetch(`${server.url}/api/forms/${id}/token`)).json()) as { token: string };
    await fetch(`${server.url}/api/forms/${id}/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': UA }, body: JSON.stringify({ answers: { name: 'Ada' }, _token: token }) });
    const [, notification] = await smtp.waitFor(2);
    const link = new URL(/^List-Unsubscribe:\s*<([^>]+)>/m.exec(notification!.raw.replace(/\r?\n[ \t]+/g, ' '))![1]!);
    const guest = await (await browser.newContext()).newPage();
    await guest.goto(`${server.url}${link.pathname}${link.search}`);
    await guest.getByRole('heading', { name: 'Unsubscribe from these notifications?' }).waitFor();
    t.same(await axe(guest), [], 'the unsubscribe page: axe clean');
    await guest.screenshot({ path: `${SHOTS}unsubscribe.png` });
    await guest.getByRole('button', { name: 'Unsubscribe' }).click();
    await guest.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
    t.same(await axe(guest), [], 'the confirmation: axe clean');
    await guest.screenshot({ path: `${SHOTS}unsubscribed.png` });
    t.match(await tab.evaluate(`fetch('/dashboard/api/forms/${id}/notifications').then((r) => r.json())`), { mine: { mode: 'none' } });
  });
}
