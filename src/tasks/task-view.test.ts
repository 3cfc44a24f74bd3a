import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TasksTable } from '../db/index.ts';
import { toTaskView } from './task-view.ts';

function failedRow(code: string, reason: string | null): TasksTable {
  return {
    id: 't1',
    account_id: 'a1',
    key_id: null,
    model: 'model-3d',
    mode: 'text_to_model',
    status: 'failed',
    settings: '{}',
    inputs: '[]',
    price_minor: 100,
    currency: 'RUB',
    progress: 0,
    caption: null,
    texts: null,
    error_code: code,
    error_message: reason,
    created_at: '2030-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: '2030-01-01T00:01:00.000Z',
    files_expire_at: null,
    files_expired: 0,
    provider_ref: null,
    run_key: null,
    channel: null,
    avoid_channel: null,
    upstream_cost: null,
    revision: 1,
    webhook_url: null,
    webhook_events: null,
    upstream_cancel_at: null,
  } as unknown as TasksTable;
}

const NOW = new Date('2030-01-02T00:00:00.000Z');

describe('toTaskView error messages', () => {
  it('quotes the reason of a generation_failed after the message in the caller language', () => {
    const row = failedRow('generation_failed', 'Tripo create: code 1004: face_limit out of range');
    assert.equal(
      toTaskView(row, [], 'en', NOW).error?.message,
      'The generator could not produce a result. No money was charged. (Tripo create: code 1004: face_limit out of range)',
    );
    assert.match(
      toTaskView(row, [], 'ru', NOW).error?.message ?? '',
      /^Генератор .*\(Tripo create: code 1004/,
    );
  });

  it('keeps other failures and a missing reason to the translated message', () => {
    const bare = 'The generator could not produce a result. No money was charged.';
    assert.equal(toTaskView(failedRow('generation_failed', null), [], 'en', NOW).error?.message, bare);
    assert.equal(toTaskView(failedRow('generation_failed', '  '), [], 'en', NOW).error?.message, bare);
    const refused = toTaskView(failedRow('content_refused', 'banned by policy'), [], 'en', NOW);
    assert.doesNotMatch(refused.error?.message ?? '', /banned by policy/);
  });

  it('scrubs key shapes and cuts a long reason', () => {
    const leaked = toTaskView(
      failedRow('generation_failed', `proxy said: Authorization: Bearer sk-live-123456 ${'x'.repeat(900)}`),
      [],
      'en',
      NOW,
    ).error?.message;
    assert.doesNotMatch(leaked ?? '', /sk-live-123456/);
    assert.ok((leaked ?? '').length < 700, `${leaked?.length}`);
    assert.match(leaked ?? '', /…\)$/);
  });
});
