/**
 * The hosted pages over HTTP: /f/:id and /p/:id serve a published form or
 * poll as a whole page with its title and description in the tags link
 * previews read, noindex unless the owner allows indexing, and a 404 page
 * (or the JSON error body) for anything else. A submission from the
 * service's own page passes whatever `allowed_domains` says.
 */
import t from 'tap';
import { owner, testApp } from '../support/app.js';

const QUESTIONS = [
  { id: 'name', type: 'short_text', title: 'Your name', required: true },
  { id: 'rating', type: 'star_rating', title: 'How was it?', required: false },
];

t.test('hosted pages: tags, noindex, 404 as HTML or JSON, own pages never blocked by allowed_domains', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const make = async (url: string, payload: object, publish = true) => {
    const id = (await app.inject({ method: 'POST', url, headers: biz.headers, payload })).json().id as string;
    if (publish) await app.inject({ method: 'PUT', url: `${url}/${id}`, headers: biz.headers, payload: { published: true } });
    return id;
  };
  const form = await make('/api/forms', {
    title: 'Join the <beta> & "more"',
    description: 'Two questions, one minute.',
    questions: QUESTIONS,
    settings: { allowed_domains: ['shop.example'] },
  });
  const draft = await make('/api/forms', { title: 'Draft', questions: QUESTIONS }, false);
  const listed = await make('/api/forms', { title: 'Listed', questions: QUESTIONS, settings: { indexable: true } });
  const poll = await make('/api/polls', { question: 'Which plan do you use?', options: [{ text: 'Free' }, { text: 'Pro' }] });
  const page = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { host: 'forms.example', ...headers } });

  t.test('a published form is a whole page that the embed script draws', async (t) => {
    const reply = await page(`/f/${form}`, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    t.equal(reply.statusCode, 200);
    t.match(reply.headers['content-type'], /^text\/html; charset=utf-8/);
    const html = reply.body;
    t.match(html, '<title>Join the &#60;beta&#62; &#38; &#34;more&#34;</title>', 'the title, escaped');
    t.match(html, '<meta property="og:title" content="Join the &#60;beta&#62; &#38; &#34;more&#34;">');
    t.match(html, '<meta property="og:description" content="Two questions, one minute.">');
    t.match(html, `<meta property="og:url" content="http://forms.example/f/${form}">`);
    t.match(html, '<meta name="robots" content="noindex">', 'not indexed unless the owner says');
    t.match(html, '<meta name="viewport" content="width=device-width, initial-scale=1">', 'a phone sees it at its own width');
    t.match(html, `<div data-form="${form}" data-hosted data-lang="en"></div>`, 'a container for the embed, in the page\'s language');
    t.match(html, '<script src="/embed.js" async></script>', 'drawn by the same script sites use');
    t.match(html, /\[data-form\]\{min-height:(clamp\(\d+px, calc\(\d+px - \(100vw - 360px\) \* [\d.]+\), \d+px\)|\d+px)\}/, 'the space of the first screen held before the script runs');
    const policy = String(reply.headers['content-security-policy']);
    t.match(policy, "script-src 'self'");
    t.match(policy, /style-src 'sha256-[A-Za-z0-9+/=]+'/, 'its one stylesheet, by hash');
    t.notMatch(policy, 'unsafe-inline');
  });

  t.test('indexable: true leaves noindex out', async (t) => {
    const html = (await page(`/f/${listed}`)).body;
    t.notMatch(html, 'noindex');
    t.notMatch(html, 'og:description', 'no description, no tag');
  });

  t.test('a poll: its question as the title, its options as the description', async (t) => {
    const reply = await page(`/p/${poll}`);
    t.equal(reply.statusCode, 200);
    t.match(reply.body, '<title>Which plan do you use?</title>');
    t.match(reply.body, '<meta property="og:description" content="Free · Pro">');
    t.match(reply.body, `<div data-poll="${poll}" data-hosted data-lang="en"></div>`);
    t.match(reply.body, 'noindex');
    t.equal((await page(`/f/${poll}`)).statusCode, 404, 'a poll is not a form');
  });

  t.test('unknown, unpublished or malformed: a 404 page, or the JSON error body to a client asking for JSON', async (t) => {
    for (const url of [`/f/${draft}`, '/f/frm_01JZZZZZZZZZZZZZZZZZZZZZZZ', '/f/nonsense', '/p/pol_01JZZZZZZZZZZZZZZZZZZZZZZZ', `/p/${form}`]) {
      const html = await page(url, { accept: 'text/html' });
      t.equal(html.statusCode, 404, url);
      t.match(html.headers['content-type'], /^text\/html/, `${url}: HTML`);
      t.match(html.body, /<h1>This (form|poll) is not available<\/h1>/);
      t.match(html.body, 'noindex');
      const bare = await page(url);
      t.equal(bare.statusCode, 404);
      t.match(bare.headers['content-type'], /^text\/html/, `${url}: HTML when the client states no preference`);
      const json = await page(url, { accept: 'application/json' });
      t.equal(json.statusCode, 404);
      t.same(json.json(), { statusCode: 404, code: url.startsWith('/f') ? 'form_not_found' : 'poll_not_found', error: 'Not Found', message: url.startsWith('/f') ? 'Form not found' : 'Poll not found' }, `${url}: the standard body`);
    }
    const ranked = await page(`/f/${draft}`, { accept: 'text/html;q=0.5, application/json' });
    t.match(ranked.headers['content-type'], /^application\/json/, 'JSON ranked above HTML');
  });

  t.test("the 404 page in the visitor's language, right to left for Arabic, English otherwise", async (t) => {
    const german = await page(`/f/${draft}`, { accept: 'text/html', 'accept-language': 'de-CH,de;q=0.9,en;q=0.5' });
    t.equal(german.statusCode, 404);
    t.match(german.body, '<html lang="de">');
    t.match(german.body, '<title>Nicht gefunden</title>');
    t.match(german.body, '<h1>Dieses Formular ist nicht verfügbar</h1>');
    t.notMatch(german.body, /not available|mistyped/, 'no English left');
    const arabic = await page('/p/pol_01JZZZZZZZZZZZZZZZZZZZZZZZ', { 'accept-language': 'ar' });
    t.match(arabic.body, '<html lang="ar" dir="rtl">');
    t.match(arabic.body, '<h1>هذا الاستطلاع غير متاح</h1>');
    const other = await page(`/f/${draft}`, { 'accept-language': 'tlh' });
    t.match(other.body, '<html lang="en">');
    t.match(other.body, '<h1>This form is not available</h1>');
    t.match(other.body, '<p>The link may be mistyped, or its owner has not published it or has taken it down.</p>');
  });

  t.test("a page is in the visitor's language where the object has it: lang and dir, its head translated, the embed told", async (t) => {
    const translated = await make('/api/forms', {
      title: 'Tell us',
      description: 'One question.',
      questions: QUESTIONS,
      language: 'en',
      translations: { ar: { title: 'أخبرنا', description: 'سؤال واحد.' }, de: { title: 'Sag es uns' } },
    });
    const arabic = await page(`/f/${translated}`, { 'accept-language': 'ar-EG,en;q=0.5' });
    t.match(arabic.body, '<html lang="ar" dir="rtl">', 'Arabic, right to left');
    t.match(arabic.body, '<title>أخبرنا</title>');
    t.match(arabic.body, '<meta property="og:description" content="سؤال واحد.">');
    t.match(arabic.body, `<div data-form="${translated}" data-hosted data-lang="ar"></div>`, 'the embed shows the same language');
    t.match(arabic.headers.vary, /accept-language/i, 'a cache keeps one page per language');
    const german = await page(`/f/${translated}`, { 'accept-language': 'fr;q=0.9,de-CH;q=0.8' });
    t.match(german.body, '<html lang="de">', 'the first language the form is translated in, by its primary subtag');
    t.match(german.body, '<title>Sag es uns</title>');
    t.match(german.body, '<meta property="og:description" content="One question.">', 'what the translation leaves out, as written');
    t.match((await page(`/f/${translated}`, { 'accept-language': 'ja' })).body, '<html lang="en">', "else the form's own");
    const hebrew = await make('/api/forms', { title: 'ספרו לנו', questions: QUESTIONS, language: 'he' });
    const own = await page(`/f/${hebrew}`);
    t.match(own.body, '<html lang="he" dir="rtl">', "a form written in Hebrew: its own language, right to left");
    t.match(own.body, 'data-lang="he"');
    const polled = await make('/api/polls', { question: 'Which plan?', options: [{ text: 'Free' }, { text: 'Pro' }], language: 'en', translations: { fr: { question: 'Quelle offre ?', options: { '0': 'Gratuite' } } } });
    const french = await page(`/p/${polled}`, { 'accept-language': 'fr' });
    t.match(french.body, '<html lang="fr">');
    t.match(french.body, '<title>Quelle offre ?</title>');
    t.match(french.body, '<meta property="og:description" content="Gratuite · Pro">', "the options' texts translated");
  });

  t.test("allowed_domains never blocks the service's own page", async (t) => {
    const tokenFrom = (origin: string) => app.inject({ method: 'GET', url: `/api/forms/${form}/token`, headers: { host: 'forms.example', referer: `${origin}/f/${form}` } });
    t.equal((await tokenFrom('https://elsewhere.example')).statusCode, 403, 'another site is refused');
    const token = await tokenFrom('http://forms.example');
    t.equal(token.statusCode, 200, 'the hosted page gets a token');
    const submit = (origin: string) =>
      app.inject({
        method: 'POST',
        url: `/api/forms/${form}/submit`,
        headers: { host: 'forms.example', origin },
        payload: { answers: { name: 'Ada' }, _token: token.json().token },
      });
    t.equal((await submit('https://elsewhere.example')).statusCode, 403);
    const own = await submit('http://forms.example');
    t.equal(own.statusCode, 200, `the hosted page submits: ${own.body}`);
  });
});
