import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBlockedAddress, parseIPv6 } from './address.ts';

const BLOCKED: readonly string[] = [
  // IPv4 loopback, unspecified, private, CGNAT, link-local and metadata
  '127.0.0.1',
  '127.255.255.254',
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.255',
  '169.254.0.1',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.0.1',
  '192.168.255.255',
  '192.0.0.170',
  // documentation, benchmarking, relay, multicast, reserved, broadcast
  '192.0.2.1',
  '198.51.100.7',
  '203.0.113.200',
  '198.18.0.1',
  '198.19.255.255',
  '192.88.99.1',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  // IPv6 loopback, unspecified, link-local, unique-local, multicast, site-local, discard
  '::1',
  '0:0:0:0:0:0:0:1',
  '0000:0000:0000:0000:0000:0000:0000:0001',
  '[::1]',
  '::',
  'fe80::1',
  'fe80::1%eth0',
  'FE80::ABCD',
  'febf::1',
  'fc00::1',
  'fd12:3456:789a::1',
  'fd00:ec2::254',
  'ff02::1',
  'ff0e::1',
  'fec0::1',
  '100::1',
  // IPv4 embedded in IPv6: mapped, compatible, translated, NAT64, 6to4
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '0:0:0:0:0:ffff:7f00:0001',
  '::FFFF:10.1.2.3',
  '::ffff:a9fe:a9fe',
  '::ffff:169.254.169.254',
  '::127.0.0.1',
  '::10.0.0.1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a00:1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::8.8.8.8',
  '2002:7f00:1::',
  '2002:a00:1::1',
  '2002:c0a8:101::',
  // IPv6 special-purpose inside 2000::/3
  '2001:db8::1',
  '2001:0db8:85a3::8a2e:370:7334',
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:2::1',
  '2001:10::1',
  '2001:20::1',
  '3fff::1',
  '4000::1',
  // not an address at all, or an unusual spelling: fail closed
  '',
  'localhost',
  'example.com',
  '0177.0.0.1',
  '0x7f.0.0.1',
  '2130706433',
  '127.1',
  '127.0.0.1.',
  '1.2.3.4.5',
  '256.0.0.1',
  '::ffff:127.0.0.256',
  '1::2::3',
  ':::1',
  '12345::1',
  // forms ipaddr.js would read but a URL host never means: octal and hex IPv4 tails
  '::ffff:0x7f.0.0.1',
  '::ffff:0177.0.0.1',
  '64:ff9b::0x7f.1',
];

const PUBLIC: readonly string[] = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '169.253.255.255',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '11.0.0.1',
  '126.255.255.255',
  '128.0.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:82a::200e',
  '[2001:4860:4860::8888]',
  '2001:4860:4860:0:0:0:0:8888',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '3ffe::1',
];

describe('isBlockedAddress', () => {
  for (const ip of BLOCKED)
    it(`blocks ${JSON.stringify(ip)}`, () => assert.equal(isBlockedAddress(ip), true));
  for (const ip of PUBLIC) it(`allows ${ip}`, () => assert.equal(isBlockedAddress(ip), false));
});

describe('parseIPv6', () => {
  it('expands compressed forms and dotted tails', () => {
    assert.deepEqual(parseIPv6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(parseIPv6('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseIPv6('1::'), [1, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseIPv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    assert.deepEqual(parseIPv6('1:2:3:4:5:6:7.8.9.10'), [1, 2, 3, 4, 5, 6, 0x708, 0x90a]);
    assert.deepEqual(parseIPv6('fe80::1%25eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
  });
  it('refuses malformed text', () => {
    for (const text of ['1:2:3', '1::2::3', 'g::1', '1.2.3.4', '']) assert.equal(parseIPv6(text), null, text);
  });
});
