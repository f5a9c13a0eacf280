import { readFileSync } from 'node:fs';
import { Script, createContext } from 'node:vm';
import t from 'tap';
import { LANGUAGES, hostedStrings } from '../../src/embed/languages.js';
import { testApp } from '../support/app.js';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const texts = (value: string | Record<string, string>) => (typeof value === 'string' ? [value] : Object.values(value));

t.test('every language pack is served to any origin, cached, with every English string and its placeholders', async (t) => {
  const { app } = await testApp(t);
  const english = (await app.inject({ method: 'GET', url: '/embed/lang/en.json' })).json() as Record<string, string | Record<string, string>>;
  t.same(LANGUAGES.map((l) => l.code), ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'pl', 'sv', 'da', 'ja', 'zh', 'ko', 'ar', 'he', 'tr', 'ru', 'uk']);
  for (const { code } of LANGUAGES) {
    const reply = await app.inject({ method: 'GET', url: `/embed/lang/${code}.json`, headers: { origin: 'https://shop.example' } });
    t.equal(reply.statusCode, 200, code);
    t.equal(reply.headers['access-control-allow-origin'], '*');
    t.match(reply.headers['cache-control'], /public, max-age=\d+/);
    const pack = reply.json() as Record<string, string | Record<string, string>>;
    t.same(Object.keys(pack).sort(), Object.keys(english).sort(), `${code} has every string, and no other`);
    for (const [key, value] of Object.entries(pack)) {
      if (typeof value === 'object') t.ok('other' in value, `${code}.${key} has the plural category other`);
      // A count's forms may leave out the number ("one star"); every other string keeps the English one's names.
      for (const text of texts(value)) {
        t.ok(text.trim().length > 0, `${code}.${key} is not empty`);
        if (typeof value === 'string') t.same(placeholders(text), placeholders(texts(english[key]!)[0]!), `${code}.${key} fills the names English does`);
      }
    }
    if (code !== 'en') t.not(pack.thanks, english.thanks, `${code} is translated`);
  }
});

t.test("every pack has the hosted pages' words, kept out of what the embed is sent", async (t) => {
  const english = JSON.parse(readFileSync(new URL('../../src/embed/languages/en.json', import.meta.url), 'utf8')).hosted as Record<string, string>;
  t.same(Object.keys(english).sort(), ['missing_form', 'missing_poll', 'missing_why', 'not_found']);
  for (const { code } of LANGUAGES) {
    const hosted = JSON.parse(readFileSync(new URL(`../../src/embed/languages/${code}.json`, import.meta.url), 'utf8')).hosted as Record<string, string>;
    t.same(Object.keys(hosted).sort(), Object.keys(english).sort(), `${code} has every hosted string`);
    for (const [key, text] of Object.entries(hosted)) t.ok(text.trim().length > 0 && (code === 'en' || text !== english[key]), `${code}.hosted.${key} is translated`);
  }
  t.match(hostedStrings('de-AT,de;q=0.9,en;q=0.8'), { lang: 'de', strings: { not_found: 'Nicht gefunden' } }, 'a regional tag by its language');
  t.match(hostedStrings('xx, fr;q=0.4, ar;q=0.7'), { lang: 'ar' }, 'by q, past a language with no pack');
  t.match(hostedStrings('tlh, *;q=0.5'), { lang: 'en' }, 'English for none known');
  t.match(hostedStrings('de;q=0'), { lang: 'en' }, 'q=0 is not accepted');
  t.match(hostedStrings(undefined), { lang: 'en', strings: { not_found: 'Not found' } });
});

t.test('an unknown language or file is 404 in the documented shape', async (t) => {
  const { app } = await testApp(t);
  for (const url of ['/embed/lang/xx.json', '/embed/lang/de.js', '/embed/lang/..%2Fembed.json']) {
    const reply = await app.inject({ method: 'GET', url });
    t.equal(reply.statusCode, 404, url);
    t.match(reply.json(), { statusCode: 404, code: 'not_found' });
  }
});

t.test('the served embed carries English and the list of packs, not the packs themselves', async (t) => {
  const { app } = await testApp(t);
  const script = (await app.inject({ method: 'GET', url: '/embed.js' })).body;
  t.match(script, /Please answer this question\./, 'English is built in');
  t.notMatch(script, /Bitte beantworten Sie diese Frage/, 'German is a pack of its own');
  t.match(script, /"ar","he"/, 'the right-to-left languages');
  // The page's globals gain nothing but the shared table of packs, and only once an embed runs.
  const context = createContext({ document: { currentScript: null } });
  new Script(script).runInContext(context);
  t.equal(new Script('typeof EMBED_EN').runInContext(context), 'undefined');
  t.ok(readFileSync(new URL('../../src/embed/languages/en.json', import.meta.url), 'utf8').includes('"send"'));
});
