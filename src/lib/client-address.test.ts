import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientAddressKey } from './client-address.ts';

test('IPv6 clients are counted by their /64, IPv4 ones by their address', () => {
  assert.equal(clientAddressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(clientAddressKey('2001:db8:1:2:ffff::14'), '2001:db8:1:2::/64');
  assert.equal(clientAddressKey('2001:0db8:0001:0002:0000:0000:0000:0099'), '2001:db8:1:2::/64');
  assert.notEqual(clientAddressKey('2001:db8:1:3::1'), clientAddressKey('2001:db8:1:2::1'));
  assert.equal(clientAddressKey('203.0.113.7'), '203.0.113.7');
  assert.equal(clientAddressKey('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientAddressKey('127.0.0.1'), '127.0.0.1');
  assert.equal(clientAddressKey('not an address'), 'not an address');
});

test('a port or brackets a proxy wrote around the address are not a new address', () => {
  // Some proxies (Azure Application Gateway among them) write the client's port into X-Forwarded-For:
  // each connection's new source port must not bring a fresh budget.
  assert.equal(clientAddressKey('203.0.113.7:51234'), '203.0.113.7');
  assert.equal(clientAddressKey('203.0.113.7:51235'), clientAddressKey('203.0.113.7'));
  assert.equal(clientAddressKey('[2001:db8:1:2::1]:51234'), '2001:db8:1:2::/64');
  assert.equal(clientAddressKey('[2001:db8:1:2::5]'), '2001:db8:1:2::/64');
  assert.equal(clientAddressKey('[::ffff:203.0.113.7]:443'), '203.0.113.7');
  assert.equal(clientAddressKey('[not an address]:80'), '[not an address]:80');
  assert.equal(clientAddressKey('host.example:80'), 'host.example:80');
});
