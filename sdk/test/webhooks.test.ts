/** `webhooks.verify` accepts what a Standard Webhooks signer signed, and nothing else. */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { hmacSha256, sha256 } from '../src/hmac-sha256.ts';
import { Client, verify, WebhookVerificationError, webhooks } from '../src/index.ts';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const OTHER = `whsec_${Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')}`;
const body = JSON.stringify({
  type: 'task.succeeded',
  timestamp: '2026-01-01T00:00:00.000Z',
  data: { id: 't1', status: 'succeeded' },
});

function signed(secret = SECRET, at = new Date()): Record<string, string> {
  const id = 'msg_1';
  const signature = new Webhook(secret).sign(id, at, body);
  return {
    'Webhook-Id': id,
    'Webhook-Timestamp': String(Math.floor(at.getTime() / 1000)),
    'Webhook-Signature': signature,
  };
}

describe('webhooks.verify', () => {
  test('a delivery signed with the secret verifies and parses, from a plain object or Headers', () => {
    const event = webhooks.verify(body, signed(), SECRET);
    assert.equal(event.type, 'task.succeeded');
    assert.deepEqual(event.data, { id: 't1', status: 'succeeded' });
    assert.equal(
      verify(new TextEncoder().encode(body), new Headers(signed()), SECRET).type,
      'task.succeeded',
    );
    const c = new Client({ apiKey: 'k' });
    assert.equal(c.webhooks.verify(body, signed(), SECRET).type, 'task.succeeded');
  });

  test('two signatures in the header (a rotated secret): either secret verifies', () => {
    const headers = signed();
    headers['Webhook-Signature'] = `${signed(OTHER)['Webhook-Signature']} ${headers['Webhook-Signature']}`;
    assert.equal(verify(body, headers, SECRET).type, 'task.succeeded');
    assert.equal(verify(body, headers, OTHER).type, 'task.succeeded');
  });

  test('a wrong secret, a changed body, a missing header or an old timestamp are refused', () => {
    assert.throws(() => verify(body, signed(), OTHER), WebhookVerificationError);
    assert.throws(() => verify(body.replace('t1', 't2'), signed(), SECRET), WebhookVerificationError);
    const { 'Webhook-Signature': _, ...unsigned } = signed();
    assert.throws(() => verify(body, unsigned, SECRET), WebhookVerificationError);
    const old = signed(SECRET, new Date(Date.now() - 10 * 60_000));
    assert.throws(() => verify(body, old, SECRET), /too old/);
    const future = signed(SECRET, new Date(Date.now() + 10 * 60_000));
    assert.throws(() => verify(body, future, SECRET), /too new/);
  });

  test('a signature that is not base64, another version or a secret that is not base64 are refused', () => {
    const headers = signed();
    headers['Webhook-Signature'] = `v2,${headers['Webhook-Signature']!.slice(3)} v1,!!! v1`;
    assert.throws(() => verify(body, headers, SECRET), /No matching signature/);
    assert.throws(() => verify(body, signed(), 'whsec_!!!'), WebhookVerificationError);
    assert.throws(() => verify(body, signed(), 'whsec_'), WebhookVerificationError);
  });

  test('verifies without Web Crypto (a browser page that is not a secure context), synchronously', (t) => {
    const original = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!;
    Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
    t.after(() => Object.defineProperty(globalThis, 'crypto', original));
    assert.equal(verify(body, signed(), SECRET).type, 'task.succeeded');
    assert.throws(() => verify(body, signed(), OTHER), /No matching signature/);
  });

  test('its HMAC-SHA256 equals node:crypto for keys and messages of every length around the block', () => {
    for (let keyLength = 0; keyLength <= 130; keyLength += 13) {
      for (const messageLength of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 70_000]) {
        const key = randomBytes(keyLength);
        const message = randomBytes(messageLength);
        const expected = createHmac('sha256', key).update(message).digest();
        assert.deepEqual(Buffer.from(hmacSha256(key, message)), expected, `${keyLength}/${messageLength}`);
      }
    }
    assert.equal(
      Buffer.from(sha256(new TextEncoder().encode('abc'))).toString('hex'),
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  test('the package does not depend on standardwebhooks (CommonJS, which a browser cannot import)', () => {
    const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    assert.deepEqual(Object.keys(manifest.dependencies ?? {}), []);
  });
});
