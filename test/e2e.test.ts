import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { exited, freePort, ROOT, startServer } from './processes.ts';

const ADMIN = 'e2e-admin-token-0123456789';

describe('the real process', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-e2e-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('prints a demo key on first start and serves /v1/models with it', async () => {
    const port = String(await freePort());
    const server = await startServer({ PORT: port, DATA_DIR: path.join(dir, 'first'), LOG_LEVEL: 'warn' });
    try {
      const key = /gta_[A-Za-z0-9]{32}/.exec(server.output())?.[0];
      assert.ok(key, server.output());
      const res = await fetch(`${server.base}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { models: unknown[] }).models.length, 8);
    } finally {
      server.child.kill('SIGTERM');
      assert.equal(await exited(server.child), 0, 'graceful shutdown exits 0');
    }
  });

  test('a bad configuration value stops the start, naming the variable', async () => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'eighty', DATA_DIR: path.join(dir, 'bad') },
      stdio: 'pipe',
    });
    let err = '';
    child.stderr?.on('data', (d) => {
      err += String(d);
    });
    assert.notEqual(await exited(child), 0);
    assert.match(err, /PORT/);
  });

  test('after kill -9 with tasks running, a restart finishes every task and keeps the money whole', async () => {
    const port = String(await freePort());
    const env = {
      PORT: port,
      DATA_DIR: path.join(dir, 'crash'),
      ADMIN_TOKEN: ADMIN,
      SIM_SPEED: '60',
      JOB_LEASE: '2s',
      LOG_LEVEL: 'warn',
    };
    let server = await startServer(env);
    const key = /gta_[A-Za-z0-9]{32}/.exec(server.output())?.[0];
    assert.ok(key);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const admin = { authorization: `Bearer ${ADMIN}` };
    const me = (await (await fetch(`${server.base}/v1/me`, { headers: auth })).json()) as {
      account_id: string;
    };
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${server.base}/v1/tasks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          model: 'model-3d',
          settings: { task_type: 'text_to_model', prompt: `crash test ${i}` },
        }),
      });
      assert.equal(res.status, 202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const before = (await (
      await fetch(`${server.base}/admin/v1/accounts/${me.account_id}`, { headers: admin })
    ).json()) as {
      balance_minor: number;
      held_minor: number;
    };
    assert.ok(before.held_minor > 0);
    // Wait until the tasks run, then kill the process without warning.
    for (let i = 0; i < 100; i++) {
      const task = (await (await fetch(`${server.base}/v1/tasks/${ids[0]}`, { headers: auth })).json()) as {
        status: string;
      };
      if (task.status === 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    server.child.kill('SIGKILL');
    await exited(server.child);

    server = await startServer(env);
    try {
      assert.doesNotMatch(
        server.output(),
        /gta_[A-Za-z0-9]{32}/,
        'the demo key is printed on the first start only',
      );
      const deadline = Date.now() + 40_000;
      const statuses = new Map<string, string>();
      while (Date.now() < deadline) {
        for (const id of ids) {
          const task = (await (await fetch(`${server.base}/v1/tasks/${id}`, { headers: auth })).json()) as {
            status: string;
          };
          statuses.set(id, task.status);
        }
        if ([...statuses.values()].every((s) => s === 'succeeded' || s === 'failed' || s === 'canceled'))
          break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(
        [...statuses.values()],
        ids.map(() => 'succeeded'),
      );
      const account = (await (
        await fetch(`${server.base}/admin/v1/accounts/${me.account_id}`, { headers: admin })
      ).json()) as {
        balance_minor: number;
        held_minor: number;
      };
      // The money is whole: what was held is now captured, exactly once.
      assert.equal(account.held_minor, 0);
      assert.equal(account.balance_minor, before.balance_minor - before.held_minor);
      const ledger = (await (
        await fetch(`${server.base}/admin/v1/accounts/${me.account_id}/ledger`, { headers: admin })
      ).json()) as {
        entries: Array<{ type: string; task_id: string }>;
      };
      for (const id of ids) {
        assert.deepEqual(
          ledger.entries.filter((e) => e.task_id === id).map((e) => e.type),
          ['capture', 'hold'],
        );
      }
    } finally {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
  });

  test('WORKER=off serves the API alone; `npm run worker` (worker-main) runs the tasks', async () => {
    const port = String(await freePort());
    const env = { PORT: port, DATA_DIR: path.join(dir, 'split'), SIM_SPEED: '1000', LOG_LEVEL: 'warn' };
    const api = await startServer({ ...env, WORKER: 'off' });
    const worker = spawn(process.execPath, ['src/worker-main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: 'pipe',
    });
    try {
      const key = /gta_[A-Za-z0-9]{32}/.exec(api.output())?.[0];
      const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const res = await fetch(`${api.base}/v1/tasks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          model: 'model-3d',
          settings: { task_type: 'text_to_model', prompt: 'split' },
        }),
      });
      const { id } = (await res.json()) as { id: string };
      let status = '';
      for (let i = 0; i < 200 && status !== 'succeeded'; i++) {
        status = (
          (await (await fetch(`${api.base}/v1/tasks/${id}`, { headers: auth })).json()) as { status: string }
        ).status;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 'succeeded');
    } finally {
      worker.kill('SIGTERM');
      api.child.kill('SIGTERM');
      assert.equal(await exited(worker), 0);
      await exited(api.child);
    }
  });
});
