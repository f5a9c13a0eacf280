import t from 'tap';
import { loadConfig } from '../src/config.js';

const SECRET = 's'.repeat(32);

t.test('one process on the embedded store may generate its secret; several instances must share one', async (t) => {
  t.equal(loadConfig({}).SECRET, undefined, 'alone on the embedded store: generated in DATA_DIR');
  t.equal(loadConfig({}).ROLE, 'all');
  for (const env of [{ EVENTSTORE_URL: 'kurrentdb://127.0.0.1:2113?tls=false' }, { MONGODB_URL: 'mongodb://127.0.0.1/feedback' }, { ROLE: 'api' }, { ROLE: 'projector' }]) {
    const [name] = Object.keys(env);
    t.throws(() => loadConfig(env), { message: /^invalid configuration: SECRET must be set with / }, `${name} without SECRET`);
    t.equal(loadConfig({ ...env, SECRET }).SECRET, SECRET, `${name} with SECRET`);
  }
  t.throws(() => loadConfig({ ROLE: 'all', EVENTSTORE_URL: 'kurrentdb://db:2113', MONGODB_URL: 'mongodb://db/feedback' }), {
    message: 'invalid configuration: SECRET must be set with EVENTSTORE_URL and MONGODB_URL: every instance must sign and hash with the same one',
  });
});

t.test('REDIS_TIMEOUT_MS: 100 ms unless set, from 10 to 5000', async (t) => {
  t.equal(loadConfig({}).REDIS_TIMEOUT_MS, 100);
  t.equal(loadConfig({ REDIS_TIMEOUT_MS: '750' }).REDIS_TIMEOUT_MS, 750);
  for (const value of ['5', '5001', '1.5', 'soon']) {
    t.throws(() => loadConfig({ REDIS_TIMEOUT_MS: value }), { message: /REDIS_TIMEOUT_MS must be a whole number of milliseconds from 10 to 5000/ }, value);
  }
});

t.test('REQUEST_TIMEOUT_SECONDS: 60 s unless set, from 1 to 3600', async (t) => {
  t.equal(loadConfig({}).REQUEST_TIMEOUT_SECONDS, 60);
  t.equal(loadConfig({ REQUEST_TIMEOUT_SECONDS: '120' }).REQUEST_TIMEOUT_SECONDS, 120);
  for (const value of ['0', '3601', '1.5', 'soon']) {
    t.throws(() => loadConfig({ REQUEST_TIMEOUT_SECONDS: value }), { message: /REQUEST_TIMEOUT_SECONDS must be/ }, value);
  }
});

t.test('ROLE: all unless set; anything else is named in one line', async (t) => {
  t.equal(loadConfig({}).ROLE, 'all');
  for (const value of ['foo', '', 'ALL']) t.throws(() => loadConfig({ ROLE: value }), { message: /^invalid configuration: ROLE must be all, api or projector \(got "/ }, JSON.stringify(value));
});
