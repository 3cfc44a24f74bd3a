import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TasksTable } from '../db/index.ts';
import { LiveTaskViews } from './live-task-views.ts';

const NOW = new Date('2030-01-01T00:01:00.000Z');

function row(id: string, changes: Partial<TasksTable> = {}): TasksTable {
  return {
    id,
    account_id: 'acc-1',
    model: 'image',
    mode: 'text_to_image',
    status: 'running',
    settings: '{"prompt":"a cat"}',
    price_minor: 100,
    currency: 'RUB',
    progress: 10,
    created_at: '2030-01-01T00:00:00.000Z',
    started_at: '2030-01-01T00:00:01.000Z',
    finished_at: null,
    revision: 1,
    ...changes,
  } as TasksTable;
}

describe('LiveTaskViews', () => {
  it("gives the view's JSON, the same text while the revision stays", () => {
    const views = new LiveTaskViews();
    const first = views.json(row('t1'), 'en', NOW);
    const parsed = JSON.parse(first) as Record<string, unknown>;
    assert.equal(parsed.status, 'running');
    assert.equal(parsed.progress, 10);
    assert.deepEqual(parsed.settings, { prompt: 'a cat' });
    assert.equal(views.json(row('t1'), 'en', NOW), first);
  });

  it('builds the JSON again when the revision moved, and keeps languages apart', () => {
    const views = new LiveTaskViews();
    views.json(row('t1'), 'en', NOW);
    const moved = JSON.parse(views.json(row('t1', { progress: 40, revision: 2 }), 'en', NOW)) as {
      progress: number;
    };
    assert.equal(moved.progress, 40);
    const queuedAgain = JSON.parse(
      views.json(row('t1', { status: 'queued', progress: 0, started_at: null, revision: 3 }), 'en', NOW),
    ) as { status: string; started_at: string | null };
    assert.deepEqual([queuedAgain.status, queuedAgain.started_at], ['queued', null]);
    views.json(row('t1', { revision: 3 }), 'ru', NOW);
    assert.equal(views.size, 2, 'one entry per task and language');
  });

  it('refuses final tasks, forgets a task in every language, and stays within its capacity', () => {
    const views = new LiveTaskViews(2);
    assert.throws(() => views.json(row('t1', { status: 'succeeded' }), 'en', NOW), /only unfinished/);
    views.json(row('t1'), 'en', NOW);
    views.json(row('t1'), 'ru', NOW);
    views.forget('t1');
    assert.equal(views.size, 0);
    for (const id of ['a', 'b', 'c']) views.json(row(id), 'en', NOW);
    assert.equal(views.size, 2, 'the oldest went out');
  });
});
