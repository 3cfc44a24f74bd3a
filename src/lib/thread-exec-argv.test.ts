import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { threadExecArgv } from './thread-exec-argv.ts';

test("a thread with the pools' options refuses require() of an ES module, so piscina imports it", async () => {
  const entry = new URL('./thread-exec-argv.ts', import.meta.url).pathname;
  const code =
    "const { parentPort, workerData } = require('node:worker_threads');" +
    'try { require(workerData); parentPort.postMessage("required"); }' +
    ' catch (error) { parentPort.postMessage(error.code); }';
  const worker = new Worker(code, { eval: true, execArgv: threadExecArgv(), workerData: entry });
  try {
    const answer = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    assert.equal(answer, 'ERR_REQUIRE_ESM');
  } finally {
    await worker.terminate();
  }
});
