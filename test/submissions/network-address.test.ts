import t from 'tap';
import { networkAddress } from '../../src/submissions/visitors.js';

t.test('a network is an IPv4 address whole, an IPv6 address by its /64', async (t) => {
  t.equal(networkAddress('203.0.113.9'), '203.0.113.9');
  t.equal(networkAddress('::ffff:203.0.113.9'), '203.0.113.9', 'IPv4-mapped');
  t.equal(networkAddress('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(networkAddress('2001:DB8:1:2::abcd'), '2001:db8:1:2::/64', 'compressed, upper case');
  t.equal(networkAddress('2001:0db8:0001:0002:ffff::1'), '2001:db8:1:2::/64', 'leading zeros');
  t.equal(networkAddress('2001:db8::1'), '2001:db8:0:0::/64', 'compressed into the prefix');
  t.equal(networkAddress('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone is dropped');
  t.equal(networkAddress('::1'), '0:0:0:0::/64');
  t.not(networkAddress('2001:db8:1:2::1'), networkAddress('2001:db8:1:3::1'), 'another /64 is another network');
});
