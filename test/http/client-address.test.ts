import t from 'tap';
import { rateLimitedAddress } from '../../src/http/client-address.js';

t.test('per-address limits count IPv4 by address and IPv6 by /64', async (t) => {
  t.equal(rateLimitedAddress('198.51.100.7'), '198.51.100.7');
  t.equal(rateLimitedAddress('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  t.equal(rateLimitedAddress('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'every address of the /64 is one client');
  t.equal(rateLimitedAddress('2001:0db8:0001:0002:0000:0000:0000:0009'), '2001:db8:1:2::/64', 'however it is written');
  t.not(rateLimitedAddress('2001:db8:1:3::1'), rateLimitedAddress('2001:db8:1:2::1'), 'the next /64 is another client');
  t.equal(rateLimitedAddress('::1'), '0:0:0:0::/64');
  t.equal(rateLimitedAddress('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone is left out');
  t.equal(rateLimitedAddress('::ffff:192.0.2.1'), '192.0.2.1', 'IPv4 written as IPv6 is the IPv4 address');
  t.equal(rateLimitedAddress('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  t.equal(rateLimitedAddress('not an address'), 'not an address', 'anything else counts as it is');
});
