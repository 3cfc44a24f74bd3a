import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyPrincipal } from '../accounts/index.ts';
import { FinalTaskViews } from './final-task-views.ts';
import type { TaskView } from './task-view.ts';

const EXPIRES_AT = '2030-01-15T00:00:00.000Z';
const BEFORE = Date.parse(EXPIRES_AT) - 1;
const AFTER = Date.parse(EXPIRES_AT);

function principal(accountId: string, models: string[] | null = null): KeyPrincipal {
  return { keyId: `key-${accountId}`, accountId, prefix: 'gta_x', models, dailyLimitMinor: null };
}

function view(id: string, status: TaskView['status'] = 'succeeded'): TaskView {
  return {
    id,
    model: 'image',
    mode: 'text_to_image',
    status,
    settings: { prompt: 'a cat' },
    price: { amount_minor: 100, currency: 'RUB' },
    progress: status === 'succeeded' ? 100 : 0,
    created_at: '2030-01-01T00:00:00.000Z',
    started_at: null,
    ...(status === 'succeeded'
      ? {
          result: {
            caption: '',
            texts: [],
            files_expire_at: EXPIRES_AT,
            files_expired: false,
            artifacts: [],
          },
        }
      : {}),
  };
}

describe('FinalTaskViews', () => {
  it('gives a kept view and its JSON back to its account, in its language only', () => {
    const views = new FinalTaskViews();
    const kept = views.remember('a', 'en', view('t1'));
    assert.equal(kept.json, JSON.stringify(kept.view));
    assert.deepEqual(views.find(principal('a'), 't1', 'en', BEFORE), kept);
    assert.equal(views.find(principal('a'), 't1', 'ru', BEFORE), undefined);
    assert.equal(views.find(principal('a'), 't2', 'en', BEFORE), undefined);
  });

  it('never shows a view to another account or to a key restricted to other models', () => {
    const views = new FinalTaskViews();
    views.remember('a', 'en', view('t1'));
    assert.equal(views.find(principal('b'), 't1', 'en', BEFORE), undefined);
    assert.equal(views.find(principal('a', ['video']), 't1', 'en', BEFORE), undefined);
    assert.ok(views.find(principal('a', ['image']), 't1', 'en', BEFORE));
  });

  it('refuses to keep a task that is not final', () => {
    const views = new FinalTaskViews();
    for (const status of ['queued', 'running'] as const) {
      assert.throws(() => views.remember('a', 'en', view('t1', status)), /only final tasks/);
    }
    assert.equal(views.size, 0);
    for (const status of ['failed', 'canceled'] as const)
      views.remember('a', 'en', view(`t-${status}`, status));
    assert.equal(views.size, 2);
  });

  it('refuses to keep one task for two accounts', () => {
    const views = new FinalTaskViews();
    views.remember('a', 'en', view('t1'));
    assert.throws(() => views.remember('b', 'en', view('t1')), /another account/);
    assert.equal(views.find(principal('a'), 't1', 'en', BEFORE)?.view.id, 't1');
  });

  it('shows the files as expired from files_expire_at on, view and JSON alike', () => {
    const views = new FinalTaskViews();
    views.remember('a', 'en', view('t1'));
    assert.equal(views.find(principal('a'), 't1', 'en', BEFORE)?.view.result?.files_expired, false);
    const expired = views.find(principal('a'), 't1', 'en', AFTER);
    assert.equal(expired?.view.result?.files_expired, true);
    assert.equal(JSON.parse(expired?.json ?? '{}').result.files_expired, true);
    assert.equal(views.find(principal('a'), 't1', 'en', BEFORE)?.view.result?.files_expired, true);
  });

  it('keeps at most its capacity, dropping the oldest first', () => {
    const views = new FinalTaskViews(2);
    views.remember('a', 'en', view('t1'));
    views.remember('a', 'en', view('t2'));
    views.remember('a', 'en', view('t2'));
    assert.equal(views.size, 2);
    views.remember('a', 'en', view('t3'));
    assert.equal(views.size, 2);
    assert.equal(views.find(principal('a'), 't1', 'en', BEFORE), undefined);
    assert.ok(views.find(principal('a'), 't2', 'en', BEFORE));
    assert.ok(views.find(principal('a'), 't3', 'en', BEFORE));
  });
});
