/**
 * The object store failing while tasks finish (issue 10, fault injection): an S3 server answering 500s and
 * one that accepts connections and never answers. Whatever the store does, every task ends final and the
 * ledger stays whole (`close()` checks it). Runs only when TEST_STORAGE_URL names an S3 server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseS3Url } from '../src/storage/s3-url.ts';
import { FaultProxy, targetOf } from './fault-proxy.ts';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';

const STORAGE = process.env.TEST_STORAGE_URL;

const ERROR_BODY =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>down</Message></Error>';
const INTERNAL_ERROR =
  'HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\n' +
  `Content-Length: ${Buffer.byteLength(ERROR_BODY)}\r\nConnection: close\r\n\r\n${ERROR_BODY}`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('object store faults while tasks finish', { skip: !STORAGE && 'needs TEST_STORAGE_URL' }, () => {
  let proxy: FaultProxy;
  let t: TestApp;
  let key = '';

  before(async () => {
    const endpoint = parseS3Url(STORAGE!).endpoint!;
    proxy = await FaultProxy.start(targetOf(endpoint));
    const url = new URL(STORAGE!);
    url.searchParams.set('endpoint', proxy.rewrite(endpoint).replace(/\/$/, ''));
    // Short bounds so a hanging store costs the test seconds, not the production minute.
    url.searchParams.set('requestTimeout', '1000');
    url.searchParams.set('idleTimeout', '1000');
    t = await startTestApp({ env: { STORAGE_URL: url.toString() } });
    key = (await t.account({ balanceMinor: 10_000_000 })).key;
  });

  after(async () => {
    await t.close();
    await proxy.close();
  });

  /** Creates `count` tasks and returns their ids. */
  async function createTasks(count: number, label: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await t.call(key, 'POST', '/v1/tasks', {
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: `${label} ${i}` },
      });
      assert.equal(res.statusCode, 202, res.body);
      ids.push(res.json().id);
    }
    return ids;
  }

  async function assertAllFinal(ids: string[]): Promise<string[]> {
    const statuses: string[] = [];
    for (const id of ids) {
      const task = await waitForFinal(t, key, id, 45_000);
      assert.ok(['succeeded', 'failed'].includes(task.status), `task ${id} is ${task.status}`);
      statuses.push(task.status);
    }
    return statuses;
  }

  test('[10 faults] an S3 answering 500 while tasks finish: every task final, ledger whole', async () => {
    await proxy.answer(INTERNAL_ERROR);
    const ids = await createTasks(4, 'five hundred');
    await sleep(2_500);
    await proxy.restore();
    await assertAllFinal(ids);
    // After the store is back, tasks succeed again.
    const [after] = await assertAllFinal(await createTasks(1, 'after five hundred'));
    assert.equal(after, 'succeeded');
  });

  test('[10 faults] an S3 that hangs while tasks finish: every task final, ledger whole', async () => {
    await proxy.cut('blackhole');
    const ids = await createTasks(4, 'hang');
    await sleep(3_000);
    await proxy.restore();
    await assertAllFinal(ids);
    const [after] = await assertAllFinal(await createTasks(1, 'after hang'));
    assert.equal(after, 'succeeded');
  });
});
