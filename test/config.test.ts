import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.js';

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

t.test('a bad value is named in one line, and a credential in it is never echoed', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /^invalid configuration: PORT must be a whole number from 1 to 65535 \(got "abc"\)$/],
    [{ PORT: '70000' }, /^invalid configuration: PORT /],
    [{ LOG_LEVEL: 'verbose' }, /^invalid configuration: LOG_LEVEL /],
    [{ EVENTSTORE_URL: 'http://user:pw@example' }, /^invalid configuration: EVENTSTORE_URL must be an esdb:\/\/ or kurrentdb:\/\/ connection string$/],
    [{ MONGODB_URL: 'postgres://user:pw@x' }, /^invalid configuration: MONGODB_URL /],
    [{ SECRET: 'short' }, /^invalid configuration: SECRET must be at least 32 characters$/],
    [{ TRUST_PROXY: 'maybe' }, /^invalid configuration: TRUST_PROXY /],
    [{ PUBLIC_BASE_URL: 'not a url' }, /^invalid configuration: PUBLIC_BASE_URL /],
    [{ PUBLIC_BASE_URL: 'https://feedback.example.com/?q=1' }, /^invalid configuration: PUBLIC_BASE_URL must be an http\(s\) URL without \?query or #fragment/],
    [{ PUBLIC_BASE_URL: 'https://feedback.example.com/#top' }, /^invalid configuration: PUBLIC_BASE_URL must be an http\(s\) URL without \?query or #fragment/],
    [{ ROLE: 'worker' }, /^invalid configuration: ROLE /],
    [{ HOST: '300.1.1.1' }, /^invalid configuration: HOST must be an IP address or a host name \(got "300\.1\.1\.1"\)$/],
    [{ METRICS_TOKEN: 'short' }, /^invalid configuration: METRICS_TOKEN must be at least 16 characters$/],
    // Several instances share the stores or split the roles: one generated secret per DATA_DIR would not do.
    [{ EVENTSTORE_URL: 'kurrentdb://admin:pw@127.0.0.1:2113?tls=false' }, /^invalid configuration: SECRET must be set with EVENTSTORE_URL: /],
    [{ MONGODB_URL: 'mongodb://user:pw@127.0.0.1:27017/feedback' }, /^invalid configuration: SECRET must be set with MONGODB_URL: /],
    [{ ROLE: 'api' }, /^invalid configuration: SECRET must be set with ROLE=api: /],
    [{ ROLE: 'projector', SECRET: '' }, /^invalid configuration: SECRET must be set with ROLE=projector: /],
  ];
  for (const [env, line] of cases) {
    let message = '';
    try {
      loadConfig(env);
    } catch (error) {
      t.ok(error instanceof ConfigError, `${Object.keys(env).join()}: refused as configuration`);
      message = (error as Error).message;
    }
    t.match(message, line);
    t.equal(message.split('\n').length, 1, 'one line');
    t.notMatch(message, /pw@/, 'credentials are never echoed');
  }
});
