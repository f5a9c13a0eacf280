/**
 * A session that ends while the owner edits, in a real browser: saving then
 * says so and keeps what was typed; signed in again in another tab, the
 * same Save goes through from the same page.
 */
import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { owner } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { admin, json, startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';

const SHOTS = `${ARTIFACTS}dashboard-session/`;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('an edit survives the end of its session, and is saved once the owner signs in again', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const dir = tempDir(t);
    const services = await testServices(t, { dataDir: dir });
    const biz = await owner(services);
    await services.close();
    const server = await startServer({ DATA_DIR: dir });
    t.teardown(() => server.stop());
    const loginLink = async () => json(await admin(['login-link', '--account', biz.accountId, '--base', server.url], { DATA_DIR: dir })).url as string;

    const browser = await launch(t);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(120_000);
    t.teardown(() => context.close());
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(await loginLink());
    // The sign-in page waits for the visitor's click, and names the account it signs in to.
    await tab.getByText(/signs you in to the account business owner/).waitFor();
    await tab.screenshot({ path: `${SHOTS}sign-in.png` });
    await tab.getByRole('button', { name: 'Sign in to business owner' }).click();
    await tab.waitForURL(`${server.url}/dashboard`);

    // A link of another account, sent by someone else: the page says the browser is signed in elsewhere, and staying is one click.
    const { account_id: lureAccount } = json(await admin(['create-account', '--name', 'Someone else', '--plan', 'free'], { DATA_DIR: dir })) as { account_id: string };
    const lure = json(await admin(['login-link', '--account', lureAccount, '--base', server.url], { DATA_DIR: dir })).url as string;
    await tab.goto(lure);
    await tab.getByText(/This browser is signed in to the account business owner/).waitFor();
    await tab.screenshot({ path: `${SHOTS}sign-in-other-account.png` });
    await tab.getByRole('link', { name: 'Stay signed in to business owner' }).click();
    await tab.waitForURL(`${server.url}/dashboard`);
    t.equal(await tab.evaluate(`fetch('/dashboard/api/session').then((r) => r.json()).then((s) => s.account.name)`), 'business owner', 'still signed in to their own account');
    await tab.goto(`${server.url}/dashboard/widgets/new`);
    await tab.getByLabel('Title', { exact: true }).fill('Typed before the session ended');

    // The session ends elsewhere (another tab signs out).
    const other = await context.newPage();
    await other.goto(`${server.url}/dashboard`);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.waitForURL(`${server.url}/dashboard/signed-out`);

    await tab.getByRole('button', { name: 'Create widget' }).click();
    await tab.getByText(/your session has ended/).waitFor();
    t.equal(new URL(tab.url()).pathname, '/dashboard/widgets/new', 'the editor stays');
    t.equal(await tab.getByLabel('Title', { exact: true }).inputValue(), 'Typed before the session ended', 'with what was typed');
    await tab.screenshot({ path: `${SHOTS}session-ended.png` });

    // Signed in again in the other tab: the editor's page holds the old session's CSRF token, and its Save still goes through.
    await other.goto(await loginLink());
    await other.getByRole('button', { name: /^Sign in to / }).click();
    await other.waitForURL(`${server.url}/dashboard`);
    await tab.getByRole('button', { name: 'Create widget' }).click();
    await tab.getByRole('link', { name: 'View widget and responses' }).waitFor();
    t.match(new URL(tab.url()).pathname, /^\/dashboard\/widgets\/wgt_[^/]+\/edit$/, 'created');
    const id = new URL(tab.url()).pathname.split('/')[3]!;
    const stored = (await tab.evaluate(`fetch('/dashboard/api/widgets/${id}').then((r) => r.json())`)) as { title: string };
    t.equal(stored.title, 'Typed before the session ended', 'with what was typed before the session ended');
    t.same(errors, [], 'no page threw');
  });
}
