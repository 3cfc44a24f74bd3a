import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { freshPostgres } from './databases.ts';
import { freePort, ROOT, type Server, startServer } from './processes.ts';

// Issue 18: the API keeps keys it has seen in memory, yet a key revoked by ANOTHER process (the operator's
// CLI here) is refused by a running API process on its next request: on SQLite through the `keys` epoch,
// on PostgreSQL through NOTIFY. Real processes, as `npm start` and `npm run admin` run them.

const run = promisify(execFile);
const ADMIN = 'key-cache-admin-token-0123456789';
const servers: Server[] = [];
after(() => {
  for (const server of servers) server.child.kill('SIGKILL');
});

async function json(base: string, token: string, method: string, url: string, body?: unknown) {
  const response = await fetch(base + url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    body: (await response.json().catch(() => null)) as Record<string, unknown>,
  };
}

test('a key revoked by the CLI in another process is refused by the running API at once', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-keycache-e2e-'));
  const server = process.env.TEST_DATABASE_URL;
  const pg = server ? await freshPostgres(server, 'gta_keycache_e2e') : null;
  try {
    const port = await freePort();
    const env: Record<string, string> = {
      PORT: String(port),
      DATA_DIR: dir,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      ...(pg ? { DATABASE_URL: pg.url } : {}),
    };
    const api = await startServer(env);
    servers.push(api);
    const base = `http://127.0.0.1:${port}`;
    const account = await json(base, ADMIN, 'POST', '/admin/v1/accounts', { name: 'cache e2e' });
    const issued = await json(base, ADMIN, 'POST', `/admin/v1/accounts/${account.body.id}/keys`, {});
    const key = String(issued.body.key);
    for (let i = 0; i < 3; i++) assert.equal((await json(base, key, 'GET', '/v1/me')).status, 200);

    await run(process.execPath, ['src/cli/main.ts', 'admin', 'keys', 'revoke', String(issued.body.id)], {
      cwd: ROOT,
      env: { ...process.env, ...env, PORT: '0' },
    });
    const revokedAt = Date.now();
    let answer = await json(base, key, 'GET', '/v1/me');
    if (pg) {
      // NOTIFY travels to the API's LISTEN connection: refused as soon as it lands, well before the 1 s time to live would end it.
      while (answer.status === 200 && Date.now() - revokedAt < 500) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        answer = await json(base, key, 'GET', '/v1/me');
      }
    }
    assert.equal(answer.status, 401, 'the revoked key is refused');
    assert.equal((answer.body.error as { code: string }).code, 'invalid_api_key');
  } finally {
    for (const s of servers.splice(0)) s.child.kill('SIGKILL');
    await pg?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
