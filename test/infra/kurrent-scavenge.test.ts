import t from 'tap';
import { scavengeIdFrom, scavengeRequests, startScavenge } from '../../src/infra/event-store/kurrent-scavenge.js';
import { freePort } from '../support/processes.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

t.test('a scavenge request goes to each node in the connection string, as its admin user', async (t) => {
  t.same(scavengeRequests('kurrentdb://admin:changeit@localhost:2113?tls=false'), [
    { node: 'localhost:2113', url: 'http://localhost:2113/admin/scavenge', headers: { accept: 'application/json', authorization: basic('admin', 'changeit') } },
  ], 'tls=false: plain HTTP on the port gRPC uses');

  t.same(scavengeRequests('esdb+discover://ops:pw@node1,node2:2114,node3/?tlsCAFile=%2Fetc%2Fkurrent%2Fca%20root.crt'), ['node1:2113', 'node2:2114', 'node3:2113'].map((node) => ({
    node,
    url: `https://${node}/admin/scavenge`,
    headers: { accept: 'application/json', authorization: basic('ops', 'pw') },
    tls: { verify: true, caFile: '/etc/kurrent/ca root.crt' },
  })), 'TLS by default, port 2113 by default, the CA file decoded');

  const [lax] = scavengeRequests('kurrentdb://admin:changeit@db.internal?TLS-Verify-Cert=false&threads=9');
  t.same(lax!.tls, { verify: false }, 'option names compare as the client compares them');
  t.equal(lax!.url, 'https://db.internal:2113/admin/scavenge', 'an option the scavenge does not use is not passed on');

  t.equal(scavengeRequests('kurrentdb://admin:changeit@localhost?tls=false', { threads: 2 })[0]!.url, 'http://localhost:2113/admin/scavenge?threads=2');
  t.equal(scavengeRequests('kurrentdb://ad%40min:p%3Ass%2Fw@localhost?tls=false')[0]!.headers.authorization, basic('ad@min', 'p:ss/w'), 'credentials are percent-decoded');

  t.same(scavengeRequests('kurrentdb://localhost:2113?tls=false')[0]!.headers, { accept: 'application/json' }, 'no user: sent as is, for a node in insecure mode');

  const [certified] = scavengeRequests('kurrentdb://localhost:2113?userCertFile=%2Fcerts%2Fops.crt&userKeyFile=/certs/ops.key');
  t.same(certified, { node: 'localhost:2113', url: 'https://localhost:2113/admin/scavenge', headers: { accept: 'application/json' }, tls: { verify: true, certFile: '/certs/ops.crt', keyFile: '/certs/ops.key' } }, 'a user certificate stands in for a password');
});

t.test('a connection string the scavenge cannot use is refused without echoing its password', async (t) => {
  const refused: Array<[string, string, RegExp]> = [
    ['another scheme', 'http://admin:hunter22@localhost:2113', /kurrentdb:\/\//],
    ['a bad flag', 'kurrentdb://admin:hunter22@localhost?tls=maybe', /tls must be true or false/],
    ['a bad port', 'kurrentdb://admin:hunter22@localhost:21x3', /a host is not name\[:port\]/],
    ['an unencoded @ in the password', 'kurrentdb://admin:hunter22@x@localhost', /a host is not name\[:port\]/],
    ['no host', 'kurrentdb://admin:hunter22@?tls=false', /names no host/],
  ];
  for (const [name, url, message] of refused) {
    const error = (() => {
      try {
        scavengeRequests(url);
        return undefined;
      } catch (e) {
        return e as Error;
      }
    })();
    t.match(error?.message, message, name);
    t.notMatch(error?.message ?? '', /hunter22|hunter|22@x/, `${name}: no password in the message`);
  }
});

t.test("a node's answer gives the scavenge id or a one-line reason", async (t) => {
  t.equal(scavengeIdFrom('db:2113', { status: 200, statusText: 'OK', body: '{"scavengeId":"3b9a5f0e-0f3c-4d6f-9a55-1f2f1b7d8c21"}' }), '3b9a5f0e-0f3c-4d6f-9a55-1f2f1b7d8c21');
  const reasons: Array<[string, Parameters<typeof scavengeIdFrom>[1], RegExp]> = [
    ['not an admin', { status: 401, statusText: 'Unauthorized', body: '' }, /^KurrentDB node db:2113 refused the scavenge \(401\): EVENTSTORE_URL must name a user of the \$admins or \$ops group \(user:password@\)$/],
    ['already running', { status: 400, statusText: 'Bad Request', body: 'Scavenge already\nin progress' }, /^KurrentDB node db:2113 answered 400 Bad Request: Scavenge already in progress$/],
    ['no id', { status: 200, statusText: 'OK', body: '{}' }, /started no scavenge it could name: \{\}$/],
    ['not JSON', { status: 200, statusText: 'OK', body: '<html>' }, /started no scavenge it could name: <html>$/],
  ];
  for (const [name, answer, message] of reasons) t.throws(() => scavengeIdFrom('db:2113', answer), { message }, name);
});

t.test('a node that cannot be reached, or a TLS file that cannot be read, fails the request in one line', async (t) => {
  const port = await freePort();
  const [plain] = scavengeRequests(`kurrentdb://admin:hunter22@127.0.0.1:${port}?tls=false`);
  await t.rejects(startScavenge(plain!), { message: new RegExp(`^KurrentDB node 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED [^\\n]*$`) });
  const [secure] = scavengeRequests(`kurrentdb://admin:hunter22@127.0.0.1:${port}?tlsCAFile=/nonexistent/ca.crt`);
  await t.rejects(startScavenge(secure!), { message: /^KurrentDB node 127\.0\.0\.1:\d+: ENOENT[^\n]*ca\.crt'?$/ });
});
