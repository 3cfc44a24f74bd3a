/**
 * A second `npm start` on the port and the data of a running one cannot listen and exits: it must not
 * claim jobs first, which would then wait out their lease (`JOB_LEASE`) before anyone runs them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { createDb } from '../src/db/index.ts';
import { exited, freePort, runToExit, startServer } from './processes.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-port-taken-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a start that finds its port taken exits without claiming a job', async () => {
  const port = String(await freePort());
  const env = { PORT: port, DATA_DIR: dir, LOG_LEVEL: 'warn', RENDER_THREADS: '0' };
  // The first process only serves, so the task stays queued for whoever claims it.
  const api = await startServer({ ...env, WORKER: 'off' });
  try {
    const key = /gta_[A-Za-z0-9]{32}/.exec(api.output())?.[0];
    assert.ok(key, api.output());
    const res = await fetch(`${api.base}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'image', settings: { prompt: 'a red fox' } }),
    });
    assert.equal(res.status, 202);

    const second = await runToExit('src/main.ts', { ...process.env, ...env });
    assert.equal(second.code, 1);
    assert.match(second.out, /EADDRINUSE/);

    const db = createDb(`sqlite:${path.join(dir, 'service.db')}`);
    try {
      const jobs = await db.db.selectFrom('jobs').select(['locked_by']).execute();
      assert.deepEqual(jobs, [{ locked_by: null }]);
    } finally {
      await db.close();
    }
  } finally {
    api.child.kill('SIGTERM');
    await exited(api.child);
  }
});
