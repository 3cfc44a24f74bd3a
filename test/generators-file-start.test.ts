/**
 * A bad GENERATORS_FILE stops the real process at start (CONTRACT §11): a file that is not JSON, an
 * unknown provider, a model the provider cannot serve, or a missing key variable. The API process and a
 * worker alone exit 1 with a message naming GENERATORS_FILE and the channel at fault, before they listen
 * or touch the database.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { exited, freePort, ROOT, runToExit } from './processes.ts';

let dir: string;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-generators-file-'));
});
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

interface BadFile {
  name: string;
  /** The file's text. */
  text: string;
  /** What the message must say, the channel's name included where there is one. */
  message: RegExp;
}

const channel = (fields: Record<string, unknown>): string => JSON.stringify({ channels: [fields] });

const CASES: BadFile[] = [
  {
    name: 'not JSON',
    text: '{ "channels": [ { "name": "tripo-main", ',
    message: /GENERATORS_FILE \S+channels\.json is not JSON/,
  },
  {
    name: 'an unknown provider',
    text: channel({ name: 'odd-one', provider: 'midjourney', models: ['image'], api_key_env: 'ODD_KEY' }),
    message: /GENERATORS_FILE: channel "odd-one": unknown provider "midjourney"/,
  },
  {
    name: 'a model the provider cannot serve',
    text: channel({
      name: 'tripo-music',
      provider: 'tripo',
      models: ['music'],
      api_key_env: 'TRIPO_API_KEY',
    }),
    message: /GENERATORS_FILE: channel "tripo-music": provider tripo cannot serve model "music"/,
  },
  {
    name: 'a missing key variable',
    text: channel({
      name: 'suno-main',
      provider: 'suno',
      models: ['music'],
      api_key_env: 'SUNO_KEY_NOT_SET',
    }),
    message:
      /GENERATORS_FILE: channel "suno-main": environment variable SUNO_KEY_NOT_SET \(api_key_env\) is not set/,
  },
];

/** Runs `script` on the file; resolves with its exit code and everything it wrote. */
async function start(
  script: string,
  file: string,
  name: string,
): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['GENERATORS_FILE', 'SUNO_KEY_NOT_SET', 'DATABASE_URL', 'STORAGE_URL']) delete env[key];
  return runToExit(script, {
    ...env,
    GENERATORS_FILE: file,
    TRIPO_API_KEY: 'tsk_start',
    ODD_KEY: 'odd',
    PORT: String(await freePort()),
    DATA_DIR: path.join(dir, `data-${name}`),
    LOG_LEVEL: 'info',
  });
}

test('a bad GENERATORS_FILE stops the API and the worker with exit 1 and a message naming the channel', async () => {
  for (const [i, c] of CASES.entries()) {
    const file = path.join(dir, `case-${i}`, 'channels.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, c.text);
    for (const script of ['src/main.ts', 'src/worker-main.ts']) {
      const { code, out } = await start(script, file, `${i}-${path.basename(script, '.ts')}`);
      assert.equal(code, 1, `${script}, ${c.name}: exit code\n${out}`);
      assert.match(out, /Configuration error: /, `${script}, ${c.name}`);
      assert.match(out, c.message, `${script}, ${c.name}`);
      assert.doesNotMatch(out, /Listening on|worker started/, `${script}, ${c.name}: it must not start`);
    }
  }
  // The same file with every channel right starts the worker: the failures above were the file's.
  const good = path.join(dir, 'good.json');
  fs.writeFileSync(
    good,
    channel({ name: 'tripo-main', provider: 'tripo', models: ['model-3d'], api_key_env: 'TRIPO_API_KEY' }),
  );
  assert.doesNotMatch((await startAndStop(good)).out, /Configuration error/);
});

/** A worker on a good file: it starts, then stops on SIGTERM. */
async function startAndStop(file: string): Promise<{ out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['GENERATORS_FILE', 'DATABASE_URL', 'STORAGE_URL']) delete env[key];
  const child = spawn(process.execPath, ['src/worker-main.ts'], {
    cwd: ROOT,
    env: {
      ...env,
      GENERATORS_FILE: file,
      TRIPO_API_KEY: 'tsk_start',
      DATA_DIR: path.join(dir, 'good'),
      LOG_LEVEL: 'info',
    },
    stdio: 'pipe',
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  const deadline = Date.now() + 20_000;
  while (!out.includes('worker started') && child.exitCode === null && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.match(out, /worker started/, out);
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0, out);
  return { out };
}
