/** `npx gta run|price|tasks|download|upload|balance` run as child processes against the listening app. */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeMp3, makePng } from '../src/media/fixtures.ts';
import { startTestApp, type TestAccount, type TestApp, waitForFinal } from './helpers.ts';

const GTA = path.join(import.meta.dirname, '..', 'bin', 'gta.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('gta user commands', () => {
  let t: TestApp;
  let account: TestAccount;
  let baseUrl: string;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    account = await t.account({ balanceMinor: 1_000_000 });
  });
  after(() => t.close());

  /** Runs the CLI (asynchronously: the app answers from this process). */
  const gta = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [GTA, ...args],
        { env: { ...process.env, GTA_API_KEY: account.key, GTA_BASE_URL: baseUrl, ...env }, cwd: t.dir },
        (error, stdout, stderr) => {
          const code = error ? ((error as { code?: unknown }).code as number) : 0;
          resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
        },
      );
    });

  test('balance prints rubles with two decimals and the currency; --json the API answer', async () => {
    const run = await gta(['balance']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^10000\.00 RUB available \(key [^)]+: no daily limit\)\n$/);
    const me = JSON.parse((await gta(['balance', '--json'])).stdout);
    assert.equal(me.available_minor, 1_000_000);
    assert.equal(me.account_id, account.id);
  });

  test('price: the amount the task would hold, typed values from --set', async () => {
    const api = (
      await t.call(account.key, 'POST', '/v1/price', { model: 'image', settings: { prompt: 'fox', n: 2 } })
    ).json();
    const run = await gta(['price', 'image', '--set', 'prompt=fox', '--set', 'n=2']);
    assert.equal(run.code, 0, run.stderr);
    const rubles = `${Math.trunc(api.amount_minor / 100)}.${String(api.amount_minor % 100).padStart(2, '0')} RUB`;
    assert.equal(run.stdout, `${rubles} (available 10000.00 RUB)\n`);
    const json = JSON.parse(
      (await gta(['price', 'image', '--set', 'prompt=fox', '--set', 'n=2', '--json'])).stdout,
    );
    assert.deepEqual(json, api);
  });

  test('run: price first, plain progress lines off a terminal, the files downloaded into --out', async () => {
    const out = path.join(t.dir, 'out');
    const run = await gta(['run', 'image', '--set', 'prompt=a red fox', '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stderr.trim().split('\n');
    assert.match(lines[0]!, /^price \d+\.\d{2} RUB \(available \d+\.\d{2} RUB\)$/);
    assert.match(lines.at(-1)!, /^succeeded 100%$/);
    assert.ok(
      lines.slice(1).every((line) => /^(queued|running|succeeded) \d+%$/.test(line)),
      run.stderr,
    );
    assert.ok(!run.stderr.includes('\r'), 'no bar redrawn off a terminal');
    const saved = [...run.stdout.matchAll(/^saved (.+)$/gm)].map((m) => m[1]!);
    assert.ok(saved.length >= 1, run.stdout);
    const id = /^id: +(\S+)$/m.exec(run.stdout)![1]!;
    const task = (await t.call(account.key, 'GET', `/v1/tasks/${id}`)).json();
    assert.equal(task.status, 'succeeded');
    assert.equal(fs.statSync(saved[0]!).size, task.result.artifacts[0].size);
    assert.equal(saved[0], path.join(out, `${id}-0-${task.result.artifacts[0].filename}`));
  });

  test('run --json prints the final task; a failed task exits 1 with its code', async () => {
    const ok = await gta(['run', 'image', '--set', 'prompt=json', '--json', '--out', path.join(t.dir, 'j')]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).status, 'succeeded');
    const failed = await gta(['run', 'image', '--set', 'prompt=broken [sim:fail]']);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /task \S+ failed: generation_failed: /);
  });

  test('run: files that cannot be saved name the paid task and how to fetch them, exit 1', async () => {
    // --out under a regular file: the task succeeds (and is charged), the folder cannot be made.
    const blocker = path.join(t.dir, 'not-a-folder');
    fs.writeFileSync(blocker, '');
    const run = await gta(['run', 'image', '--set', 'prompt=unsaved', '--out', path.join(blocker, 'out')]);
    assert.equal(run.code, 1, run.stderr);
    const id = /task (\S+) succeeded, but its files were not saved: ENOTDIR/.exec(run.stderr)?.[1];
    assert.ok(id, run.stderr);
    assert.match(run.stderr, new RegExp(`gta download ${id}`));
    assert.equal((await t.call(account.key, 'GET', `/v1/tasks/${id}`)).json().status, 'succeeded');
  });

  test('a server that cannot be reached is named with the reason, exit 1', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    // "fetch failed" alone named neither the address nor why.
    const run = await gta(['balance'], { GTA_BASE_URL: `http://127.0.0.1:${port}` });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`^error: GET /v1/me: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
  });

  /**
   * `gta run image` of a task that never ends, once it shows its progress: the child, its exit code to
   * come and its standard error so far.
   */
  async function runFollowing(key: string, options: { detached?: boolean } = {}) {
    const child = spawn(process.execPath, [GTA, 'run', 'image', '--set', 'prompt=long [sim:hang]'], {
      env: { ...process.env, GTA_API_KEY: key, GTA_BASE_URL: baseUrl },
      cwd: t.dir,
      detached: options.detached ?? false,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (text: string) => {
        stderr += text;
        if (/^(queued|running) \d+%$/m.test(stderr)) resolve();
      });
    });
    return { child, ended, stderr: () => stderr };
  }

  test('Ctrl-C during run leaves the task running, names it and exits 130, also pressed twice', async () => {
    // Its own process group, as a terminal's Ctrl-C reaches bin/gta.js and the CLI under it together. The
    // CLI gets each twice (bin/gta.js passes its own on); a later one must not cut the message short.
    const run = await runFollowing(account.key, { detached: true });
    process.kill(-run.child.pid!, 'SIGINT');
    process.kill(-run.child.pid!, 'SIGINT');
    const code = await run.ended;
    const stderr = run.stderr();
    assert.equal(code, 130, stderr);
    const id = /task (\S+) keeps running/.exec(stderr)?.[1];
    assert.ok(id, stderr);
    const task = (await t.call(account.key, 'GET', `/v1/tasks/${id}`)).json();
    assert.ok(['queued', 'running'].includes(task.status), task.status);
    await t.call(account.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('a SIGINT sent to bin/gta.js alone (a supervisor, timeout -s INT) reaches the CLI: exit 130', async () => {
    const run = await runFollowing(account.key);
    run.child.kill('SIGINT');
    const code = await run.ended;
    const stderr = run.stderr();
    assert.equal(code, 130, stderr);
    const id = /task (\S+) keeps running/.exec(stderr)?.[1];
    assert.ok(id, stderr);
    await t.call(account.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('run whose key is revoked while it follows the task names the created task, exit 1', async () => {
    const owner = await t.account({ balanceMinor: 100_000 });
    const run = await runFollowing(owner.key);
    assert.equal((await t.admin('DELETE', `/admin/v1/keys/${owner.keyId}`)).statusCode, 204);
    const code = await run.ended;
    const stderr = run.stderr();
    assert.equal(code, 1, stderr);
    assert.match(stderr, /^error 401 invalid_api_key: /m);
    // Without the id the paid task was lost to the command line, and a second run paid for another.
    const id = /^task (\S+) was created and keeps going; .*gta download \1$/m.exec(stderr)?.[1];
    assert.ok(id, stderr);
    const other = await t.admin('POST', `/admin/v1/accounts/${owner.id}/keys`, {});
    const key = other.json().key as string;
    assert.ok(['queued', 'running'].includes((await t.call(key, 'GET', `/v1/tasks/${id}`)).json().status));
    await t.call(key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('tasks list, get and cancel; a second cancel is refused with code and message, exit 1', async () => {
    const created = (
      await t.call(account.key, 'POST', '/v1/tasks', {
        model: 'image',
        settings: { prompt: 'slow [sim:hang]' },
      })
    ).json();
    const list = await gta(['tasks', 'list', '--model', 'image']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      new RegExp(`^${created.id}  (queued|running) +image  \\d+\\.\\d{2} RUB  `, 'm'),
    );
    const got = await gta(['tasks', 'get', created.id, '--json']);
    assert.equal(JSON.parse(got.stdout).id, created.id);
    const canceled = await gta(['tasks', 'cancel', created.id]);
    assert.equal(canceled.code, 0, canceled.stderr);
    assert.match(canceled.stdout, /^status: +canceled$/m);
    const again = await gta(['tasks', 'cancel', created.id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error 409 task_not_cancelable: .+ \(request \S+\)\n$/);
  });

  test('upload prints the direct link; --set key=@FILE uploads and passes it, in a list where one is due', async () => {
    const png = await makePng(t.dir, 256, 256);
    const up = await gta(['upload', png]);
    assert.equal(up.code, 0, up.stderr);
    const url = up.stdout.split('\n')[0]!;
    // The direct link is under PUBLIC_BASE_URL (http://api.test in tests).
    assert.match(url, /^http:\/\/api\.test\/\S+\.png$/);

    const out = path.join(t.dir, 'm3d');
    const run = await gta([
      'run',
      'model-3d',
      '--set',
      'task_type=image_to_model',
      '--set',
      `image_url=@${png}`,
      '--json',
      '--out',
      out,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const task = JSON.parse(run.stdout);
    assert.equal(task.settings.image_url.length, 1);
    assert.match(task.settings.image_url[0], /^http/);

    // A JSON-quoted value starting with @ is text, not a file: prompts name attachments as @Image1.
    const labelled = await gta([
      'price',
      'video',
      '--set',
      'mode=reference',
      '--set',
      'prompt="@Image1 runs"',
      '--set',
      `ref_image_urls=@${png}`,
      '--json',
    ]);
    assert.equal(labelled.code, 0, labelled.stderr);
    assert.ok(JSON.parse(labelled.stdout).amount_minor > 0);
  });

  test('--set key=@FILE is a list also in modes whose schema has simple and advanced branches', async () => {
    // cover_upload and mashup describe their settings as oneOf branches, with no properties at the top.
    const mp3 = await makeMp3(t.dir, 20);
    const cover = await gta([
      'price',
      'music',
      '--set',
      'mode=cover_upload',
      '--set',
      `audio=@${mp3}`,
      '--set',
      'songDescription=rock',
    ]);
    assert.equal(cover.code, 0, cover.stderr);
    const mashup = await gta([
      'run',
      'music',
      '--set',
      'mode=mashup',
      '--set',
      `audio=@${mp3}`,
      '--set',
      `audio2=@${mp3}`,
      '--set',
      'songDescription=rock',
      '--json',
      '--out',
      path.join(t.dir, 'mashup'),
    ]);
    assert.equal(mashup.code, 0, mashup.stderr);
    const task = JSON.parse(mashup.stdout);
    assert.equal(task.settings.audio.length, 1);
    assert.equal(task.settings.audio2.length, 1);
  });

  test('download: all files or one by index; a missing index exits 1', async () => {
    const created = (
      await t.call(account.key, 'POST', '/v1/tasks', { model: 'image', settings: { prompt: 'dl' } })
    ).json();
    const task = await waitForFinal(t, account.key, created.id);
    const out = path.join(t.dir, 'dl');
    const one = await gta(['download', created.id, '0', '--out', out]);
    assert.equal(one.code, 0, one.stderr);
    const file = one.stdout.trim();
    const artifacts = (task as unknown as { result: { artifacts: Array<{ size: number }> } }).result
      .artifacts;
    assert.equal(fs.statSync(file).size, artifacts[0]!.size);
    const all = await gta(['download', created.id, '--out', out]);
    assert.equal(all.stdout.trim().split('\n').length, artifacts.length);
    const missing = await gta(['download', created.id, '99']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /has no file 99/);
    // A task with no files (still running, canceled) is not a silent success with nothing saved.
    const pending = (
      await t.call(account.key, 'POST', '/v1/tasks', {
        model: 'image',
        settings: { prompt: 'dl [sim:hang]' },
      })
    ).json();
    await t.call(account.key, 'POST', `/v1/tasks/${pending.id}/cancel`);
    const none = await gta(['download', pending.id, '--out', out]);
    assert.equal(none.code, 1, none.stdout);
    assert.match(none.stderr, /has no files \(status canceled\)/);
  });

  test('usage mistakes exit 2; a wrong key exits 1 with 401 invalid_api_key; gta admin still answers', async () => {
    for (const args of [
      ['frobnicate'],
      ['run'],
      ['price', 'image', '--set', 'novalue'],
      ['balance', '--nope'],
      ['tasks', 'x'],
      ['tasks', 'list', '--status'],
      // A second ID or FILE was dropped unseen: `tasks cancel A B` canceled A only and exited 0.
      ['tasks', 'cancel', 'task-a', 'task-b'],
      ['tasks', 'list', 'extra'],
      ['upload', 'a.png', 'b.png'],
      ['download', 'task-a', '0', '1'],
      ['run', 'image', 'extra', '--set', 'prompt=x'],
      ['balance', 'extra'],
      // An option the command does not take was ignored unseen: `tasks list --set status=failed` listed all.
      ['tasks', 'list', '--set', 'status=failed'],
      ['tasks', 'get', 'task-a', '--limit', '5'],
      ['price', 'image', '--set', 'prompt=x', '--out', 'results'],
      ['balance', '--model', 'image'],
      ['upload', 'a.png', '--timeout', '5'],
    ]) {
      const run = await gta(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /Usage: gta/);
    }
    // A bad --timeout is refused before the price, the uploads and the task (no service needed).
    const badTimeout = await gta(['run', 'image', '--set', 'prompt=x', '--timeout', 'soon'], {
      GTA_BASE_URL: 'http://127.0.0.1:1',
    });
    assert.equal(badTimeout.code, 2, badTimeout.stderr);
    assert.match(badTimeout.stderr, /^--timeout must be a whole number/);
    const noKey = await gta(['balance'], { GTA_API_KEY: '' });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /GTA_API_KEY/);
    const wrong = await gta(['balance'], { GTA_API_KEY: 'gta_wrong' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^error 401 invalid_api_key: /);
    const admin = await gta(['admin', '--help']);
    assert.equal(admin.code, 0);
    assert.match(admin.stdout, /accounts create --name NAME/);
    // The operator tool's option mistakes are usage mistakes too (they exited 1 without the usage).
    for (const args of [
      ['admin', 'accounts', 'create', '--nope'],
      ['admin', 'credit', 'ACCOUNT', '--amount'],
    ]) {
      const run = await gta(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /Usage: npm run admin/);
    }
  });
});
