/** `webhooks.verify` accepts what a Standard Webhooks signer signed, and nothing else. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
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
    assert.throws(() => verify(body, old, SECRET), WebhookVerificationError);
  });
});
