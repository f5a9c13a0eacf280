import { readFileSync } from 'node:fs';
import t from 'tap';
import { catalog } from '../../src/domain-events.js';
import { contrastRatio, parseColour, themeProblems } from '../../src/embeddables/theme.js';
import { owner, publishedWidget, testApp } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

t.test('contrast ratios, given colours in every notation the API takes', async (t) => {
  t.equal(Math.round(contrastRatio('#000', '#fff') * 100) / 100, 21, 'black on white is 21:1');
  t.equal(contrastRatio('#ffffff', 'rgb(255, 255, 255)'), 1, 'white on white is 1:1');
  t.same(parseColour('hsl(0, 100%, 50%)'), { r: 255, g: 0, b: 0, a: 1 }, 'hsl red');
  t.same(parseColour('rgb(100% 0% 0% / 50%)'), { r: 255, g: 0, b: 0, a: 0.5 }, 'space-separated rgb with a slash alpha');
  t.same(parseColour('#0f08'), { r: 0, g: 255, b: 0, a: 0x88 / 255 }, 'short hex with alpha');
  t.ok(Math.abs(contrastRatio('#767676', '#ffffff') - 4.54) < 0.01, '#767676 on white is the classic 4.54:1');
  t.ok(contrastRatio('#000000', 'rgba(0, 0, 0, 0.1)') < 2, 'a see-through background counts at its worst: over black');
});

t.test('themeProblems: a named text colour must read on its background; none named always does', async (t) => {
  const theme = { primaryColor: '#4f46e5', backgroundColor: '#111827', mode: 'light' as const };
  t.same(themeProblems({ ...theme, text_color: null }), [], 'no text colour: the embed picks one');
  t.same(themeProblems({ ...theme, text_color: '#f9fafb' }), [], 'light on dark');
  t.match(themeProblems({ ...theme, text_color: '#1f2937' }), [{ path: 'body.theme.text_color', message: /contrast of 1\.\d+:1 on backgroundColor #111827.*4\.5:1/ }]);
});

t.test('themes stored before text_color and mode read as they always looked: the text colour picked, light', async (t) => {
  for (const file of ['WidgetCreated.v2.json', 'FormCreated.v1.json', 'WidgetUpdated.v2.json']) {
    const fixture = JSON.parse(readFileSync(new URL(`../fixtures/events/${file}`, import.meta.url), 'utf8'));
    const event = catalog.parse({ id: 'e1', streamId: fixture.stream, revision: 0n, position: 1n, type: fixture.type, data: fixture.data, metadata: fixture.metadata, recordedAt: fixture.metadata.occurred_at })!;
    const data = event.data as { theme?: object; changes?: { theme?: object } };
    const before = fixture.data.theme ?? fixture.data.changes.theme;
    t.same(data.theme ?? data.changes?.theme, { ...before, text_color: null, mode: 'light' }, file);
  }
});

t.test('themes through the API: defaults, new fields, and unreadable text refused with a 400 at the field', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: biz.headers, payload });
  const read = async (url: string) => (await app.inject({ method: 'GET', url, headers: biz.headers })).json().theme;

  const plain = (await create('/api/widgets', { widget_type: 'nps', title: 'x' })).json().id;
  t.same(await read(`/api/widgets/${plain}`), { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'light' }, 'defaults');

  const dark = await create('/api/forms', { title: 'Dark', theme: { mode: 'auto', backgroundColor: '#0b1020', text_color: '#e5e7eb' } });
  t.equal(dark.statusCode, 201, dark.body);
  t.same(await read(`/api/forms/${dark.json().id}`), { primaryColor: '#4f46e5', backgroundColor: '#0b1020', text_color: '#e5e7eb', mode: 'auto' });

  for (const [url, payload] of [
    ['/api/widgets', { widget_type: 'nps', title: 'x', theme: { backgroundColor: '#111827', text_color: '#1f2937' } }],
    ['/api/forms', { title: 'x', theme: { text_color: '#eeeeee' } }],
  ] as const) {
    const reply = await create(url, payload);
    t.match(reply.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.theme.text_color', message: /needs at least 4\.5:1/ }] }, `${url}: dark on dark, light on white`);
  }
  t.match((await create('/api/widgets', { widget_type: 'nps', title: 'x', theme: { mode: 'dim' } })).json(), { details: [{ path: 'body.theme.mode' }] }, 'an unknown mode');

  const light = (await create('/api/widgets', { widget_type: 'nps', title: 'x', theme: { text_color: '#1f2937' } })).json().id;
  const update = await app.inject({ method: 'PUT', url: `/api/widgets/${light}`, headers: biz.headers, payload: { theme: { backgroundColor: '#000000' } } });
  t.match(update.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.theme.text_color', message: /on backgroundColor #000000/ }] }, 'an update checks the theme it leads to');
  t.equal((await read(`/api/widgets/${light}`)).backgroundColor, '#ffffff', 'and changes nothing');
  const both = await app.inject({ method: 'PUT', url: `/api/widgets/${light}`, headers: biz.headers, payload: { theme: { backgroundColor: '#000000', text_color: null } } });
  t.equal(both.statusCode, 200, 'a dark background with the text colour left to the embed');
});

t.test('the token endpoint refuses a site that allowed_domains leaves out, before any answer', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedWidget(app, biz, { settings: { allowed_domains: ['example.com', '*.shop.example'] } });
  const token = (origin?: string) => app.inject({ method: 'GET', url: `/api/widgets/${id}/token`, headers: origin ? { origin } : {} });
  t.match((await token('https://evil.example')).json(), { ...D3(403, 'domain_not_allowed'), message: 'This widget may not be embedded on evil.example' });
  t.equal((await token('https://example.com')).statusCode, 200, 'a listed host');
  t.equal((await token('https://eu.shop.example:8443')).statusCode, 200, 'a subdomain of a wildcard, any port');
  t.equal((await token()).statusCode, 200, 'no Origin: a server-side caller; submit checks the site again');
  const referer = await app.inject({ method: 'GET', url: `/api/widgets/${id}/token`, headers: { referer: 'https://evil.example/page' } });
  t.equal(referer.statusCode, 403, 'Referer stands in for a missing Origin');
  const open = await publishedWidget(app, biz);
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${open}/token`, headers: { origin: 'https://anywhere.example' } })).statusCode, 200, 'no allowed_domains: any site');
});
