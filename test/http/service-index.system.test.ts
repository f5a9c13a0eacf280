import t from 'tap';
import { eventually } from '../support/eventually.js';
import { startServer } from '../support/processes.js';

t.test('the start-up log line says where the docs, the OpenAPI document, the embed script, the dashboard and health are', async (t) => {
  const server = await startServer({ DATA_DIR: t.testdirName, LOG_LEVEL: 'info' });
  t.teardown(() => server.stop());
  const readyLine = () => server.log().split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((line) => /^feedback service ready/.test(line.msg));
  // The server may answer /healthz a moment before that line reaches us.
  t.ok(await eventually(() => readyLine() !== undefined), 'one line says the service is ready');
  const ready = readyLine();
  t.equal(ready.msg, `feedback service ready at ${server.url}: API docs ${server.url}/docs, OpenAPI ${server.url}/api/openapi.json, embed script ${server.url}/embed.js, dashboard ${server.url}/dashboard, health ${server.url}/healthz; mail: SMTP_URL is unset, so sign-in links and other mail are written to this log`);
  t.match(ready, { url: server.url, docs: `${server.url}/docs`, openapi: `${server.url}/api/openapi.json`, embed_script: `${server.url}/embed.js`, health: `${server.url}/healthz` });
});
