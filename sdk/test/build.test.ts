/**
 * The client is portable: it compiles with the browser's library and no Node types (no Node-only API in
 * the client path), and the compiled JavaScript runs on Node without TypeScript support (Node 20's case).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const SDK = path.join(import.meta.dirname, '..');
const TSC = path.join(SDK, '..', 'node_modules', '.bin', 'tsc');
const run = promisify(execFile);

test('compiles with lib dom and no Node types; the JavaScript runs without type stripping', async () => {
  const out = fs.mkdtempSync(path.join(SDK, '.build-'));
  try {
    await run(TSC, ['-p', path.join(SDK, 'tsconfig.json'), '--outDir', out]);
    assert.ok(fs.existsSync(path.join(out, 'index.d.ts')));
    const script = `
      const m = await import(${JSON.stringify(path.join(out, 'index.js'))});
      const c = new m.Client({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', maxRetries: 0 });
      const error = await c.me().catch((e) => e);
      console.log(JSON.stringify([typeof m.webhooks.verify, error.name]));`;
    const { stdout } = await run(process.execPath, [
      '--no-experimental-strip-types',
      '--input-type=module',
      '-e',
      script,
    ]);
    assert.deepEqual(JSON.parse(stdout), ['function', 'ConnectionError']);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
