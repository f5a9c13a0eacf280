/**
 * Mail through a real SMTP server (the smtp-server package, started by the
 * test) from a real server process: sign-in by email in Chromium, an SMTP
 * server that refuses three times, and a kill -9 between recording a mail
 * and sending it.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import t from 'tap';
import type { Page } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { eventually } from '../support/eventually.js';
import { linkIn, smtpCatcher } from '../support/mail.js';
import { admin, freePort, json, startServer } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = `${ARTIFACTS}members/`;

async function axe(tab: Page): Promise<string[]> {
  if (!(await tab.evaluate('typeof window.axe === "object"'))) await tab.evaluate(AXE);
  const violations = (await tab.evaluate(
    'axe.run(document, { preload: false, resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

const post = (url: string, email: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, body: JSON.stringify({ email }) });

t.test('an SMTP server that refuses three times, then accepts, gets the link once; an unknown address gets the same 202', async (t) => {
  const smtp = await smtpCatcher(t, { refuse: 3 });
  const dir = tempDir(t);
  const env = { DATA_DIR: dir, SMTP_URL: smtp.url, MAIL_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2' };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'free', '--owner-email', 'owner@example.com'], env));
  const server = await startServer({ ...env, LOG_LEVEL: 'info' });
  t.teardown(() => server.stop());
  t.ok(await eventually(() => /mail: sent through SMTP/.test(server.log())), 'the start-up line says where mail goes');
  const known = await post(`${server.url}/dashboard/sign-in`, 'owner@example.com');
  const unknown = await post(`${server.url}/dashboard/sign-in`, 'stranger@example.com');
  t.same([known.status, await known.text()], [unknown.status, await unknown.text()], 'the same reply');
  t.equal(known.status, 202);
  await smtp.waitFor(1);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(smtp.refused, 3, 'refused three times');
  t.equal(smtp.mails.length, 1, 'delivered once');
  t.same(smtp.mails[0]!.to, ['owner@example.com']);
  t.match(smtp.mails[0]!.raw, /Content-Type: multipart\/alternative/i, 'text and HTML');
  t.match(linkIn(smtp.mails[0]!.text, '/dashboard/login'), `${server.url}/dashboard/login?t=lnk_`);
  t.ok(opened.account_id);
});

t.test('kill -9 between recording a mail and sending it loses nothing', async (t) => {
  const port = await freePort();
  const dir = tempDir(t);
  const env = { DATA_DIR: dir, SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2' };
  json(await admin(['create-account', '--name', 'Acme', '--plan', 'free', '--owner-email', 'owner@example.com'], env));
  const first = await startServer(env);
  t.equal((await post(`${first.url}/dashboard/sign-in`, 'owner@example.com')).status, 202);
  // Recorded: the outbox has tried (no SMTP server listens yet) and will try again.
  t.ok(await eventually(() => /a mail was not accepted/.test(first.log())), 'recorded, not sent');
  first.signal('SIGKILL');
  await first.stop().catch(() => undefined);
  const smtp = await smtpCatcher(t, { port });
  const second = await startServer(env);
  t.teardown(() => second.stop());
  await smtp.waitFor(1);
  t.same(smtp.mails[0]!.to, ['owner@example.com'], 'sent after the restart');
});

if (!existsSync(CHROMIUM)) {
  t.skip(`browser part skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('sign-in by email in Chromium: the form at /dashboard, the mail, the link, the dashboard', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const smtp = await smtpCatcher(t);
    const dir = tempDir(t);
    const env = { DATA_DIR: dir, SMTP_URL: smtp.url };
    json(await admin(['create-account', '--name', 'Acme', '--plan', 'pro', '--owner-email', 'owner@example.com'], env));
    const server = await startServer(env);
    t.teardown(() => server.stop());
    const browser = await launch(t);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(120_000);
    t.teardown(() => context.close());
    const tab = await context.newPage();
    await tab.goto(`${server.url}/dashboard`);
    await tab.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
    t.same(await axe(tab), [], 'the sign-in form: axe clean');
    await tab.screenshot({ path: `${SHOTS}sign-in-form.png` });
    await tab.getByLabel('Email address').fill('owner@example.com');
    await tab.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await tab.getByRole('heading', { name: 'Check your email' }).waitFor();
    t.same(await axe(tab), [], 'the sent page: axe clean');
    await tab.screenshot({ path: `${SHOTS}check-your-email.png` });
    const [mail] = await smtp.waitFor(1);
    await tab.goto(linkIn(mail!.text, '/dashboard/login'));
    await tab.getByRole('button', { name: 'Sign in to Acme' }).click();
    await tab.waitForURL(`${server.url}/dashboard`);
    const session = (await tab.evaluate(`fetch('/dashboard/api/session').then((r) => r.json())`)) as { member: { email: string }; role: string };
    t.match(session, { member: { email: 'owner@example.com' }, role: 'owner' });

    // The same link again: refused, with a way back to the form.
    const again = await context.newPage();
    await again.goto(linkIn(mail!.text, '/dashboard/login'));
    await again.getByText(/has been used already/).waitFor();
    t.same(await axe(again), [], 'the refusal: axe clean');
    await again.screenshot({ path: `${SHOTS}link-used.png` });

    // An invitation: the owner invites, the invited person accepts in another browser.
    const csrf = await tab.evaluate(`fetch('/dashboard/api/session').then((r) => r.json()).then((s) => s.csrf_token)`);
    const invited = await tab.evaluate(
      `fetch('/dashboard/api/members/invitations', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': ${JSON.stringify(csrf)} }, body: JSON.stringify({ email: 'viewer@example.com', role: 'viewer' }) }).then((r) => r.status)`,
    );
    t.equal(invited, 201);
    const [, invitation] = await smtp.waitFor(2);
    const guest = await (await browser.newContext()).newPage();
    await guest.goto(linkIn(invitation!.text, '/dashboard/invitations/accept'));
    await guest.getByRole('heading', { name: 'Join Acme' }).waitFor();
    t.same(await axe(guest), [], 'the invitation page: axe clean');
    await guest.screenshot({ path: `${SHOTS}invitation.png` });
    await guest.getByRole('button', { name: 'Accept and sign in' }).click();
    await guest.waitForURL(`${server.url}/dashboard`);
    t.match(await guest.evaluate(`fetch('/dashboard/api/session').then((r) => r.json())`), { account: { name: 'Acme' }, role: 'viewer' }, 'the member sees the account');

    // The members page: the owner manages; the viewer sees the list and the activity, and no way to change them.
    await tab.goto(`${server.url}/dashboard/settings/members`);
    await tab.getByRole('button', { name: 'Send invitation' }).waitFor();
    await tab.getByRole('cell', { name: 'viewer@example.com' }).first().waitFor();
    t.same(await axe(tab), [], 'the members page: axe clean');
    await tab.screenshot({ path: `${SHOTS}members-owner.png`, fullPage: true });
    await guest.goto(`${server.url}/dashboard/settings/members`);
    await guest.getByRole('heading', { name: 'Activity' }).waitFor();
    t.equal(await guest.getByRole('button', { name: 'Send invitation' }).count(), 0, 'a viewer is offered no invitation');
    t.equal(await guest.getByRole('link', { name: 'Developers' }).count(), 0, 'nor the keys');
    t.same(await axe(guest), [], 'the viewer\'s members page: axe clean');
    await guest.screenshot({ path: `${SHOTS}members-viewer.png`, fullPage: true });
    const refused = await guest.evaluate(
      `fetch('/dashboard/api/forms', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': document.querySelector('meta[name=csrf-token]').content }, body: JSON.stringify({ title: 'x' }) }).then(async (r) => [r.status, (await r.json()).code])`,
    );
    t.same(refused, [403, 'forbidden'], 'a viewer\'s change is refused by the server');
  });
}
