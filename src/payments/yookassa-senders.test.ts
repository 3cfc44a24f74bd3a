import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isYookassaSender } from './yookassa-senders.ts';

/** Each published range's first and last address, and the single addresses. */
const SENDERS: readonly string[] = [
  '185.71.76.0',
  '185.71.76.31',
  '185.71.77.0',
  '185.71.77.31',
  '77.75.153.0',
  '77.75.153.127',
  '77.75.156.11',
  '77.75.156.35',
  '77.75.154.128',
  '77.75.154.255',
  // IPv4-mapped IPv6: how a dual-stack listener reports an IPv4 peer, dotted or in hex
  '::ffff:185.71.76.1',
  '::FFFF:77.75.156.35',
  '::ffff:b947:4c01',
  '0:0:0:0:0:ffff:77.75.154.200',
  // IPv6 2a02:5180::/32
  '2a02:5180::',
  '2a02:5180::1',
  '2A02:5180:ffff:ffff:ffff:ffff:ffff:ffff',
];

/** Just outside each range, other embeddings of an IPv4 sender, and what is not an address at all. */
const OTHERS: ReadonlyArray<string | undefined> = [
  '185.71.76.32',
  '185.71.75.255',
  '185.71.77.32',
  '77.75.153.128',
  '77.75.152.255',
  '77.75.156.10',
  '77.75.156.12',
  '77.75.156.34',
  '77.75.156.36',
  '77.75.154.127',
  '77.75.155.0',
  '127.0.0.1',
  '10.0.0.1',
  '::ffff:185.71.76.32',
  '::ffff:127.0.0.1',
  // IPv4-compatible, IPv4-translated and NAT64 forms are other IPv6 addresses
  '::185.71.76.1',
  '::ffff:0:185.71.76.1',
  '64:ff9b::185.71.76.1',
  '2a02:5181::1',
  '2a02:517f:ffff::1',
  '::1',
  '::',
  // spellings a socket never reports, and garbage
  '185.071.076.001',
  '0xb9.71.76.1',
  '185.71.76',
  '185.71.76.1/27',
  '[2a02:5180::1]',
  '',
  'yookassa.ru',
  undefined,
];

describe('isYookassaSender', () => {
  for (const address of SENDERS) {
    it(`takes ${address} as YooKassa's`, () => assert.equal(isYookassaSender(address), true));
  }
  for (const address of OTHERS) {
    it(`refuses ${String(address)}`, () => assert.equal(isYookassaSender(address), false));
  }
});
