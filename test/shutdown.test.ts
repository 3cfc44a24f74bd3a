/**
 * SIGTERM of the real process (`npm start`) while a client downloads a large file and stops reading: the
 * download is cut off after a grace period and the process exits, instead of waiting for the client.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { silentWav } from '../src/media/fixtures.ts';
import { exited, freePort, startServer } from './processes.ts';

/** A stereo 44.1 kHz WAV of `dataBytes` bytes of silence: larger than the socket buffers of loopback together. */
const wav = (dataBytes: number): Buffer<ArrayBuffer> => silentWav(dataBytes, { channels: 2, rate: 44_100 });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-shutdown-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('SIGTERM with a download whose client stopped reading exits within a few seconds', async () => {
  const port = await freePort();
  const server = await startServer({ PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'warn' });
  const client = new net.Socket();
  try {
    const key = /gta_[A-Za-z0-9]{32}/.exec(server.output())?.[0];
    assert.ok(key, server.output());
    const res = await fetch(`${server.base}/v1/files?filename=long.wav`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' },
      body: wav(40 * 1024 * 1024),
    });
    assert.equal(res.status, 201);
    const link = new URL(((await res.json()) as { url: string }).url);

    // A client that asks for the file, reads its first bytes and then reads nothing more.
    await new Promise<void>((resolve, reject) => {
      client.once('error', reject);
      client.connect(port, '127.0.0.1', () => {
        client.write(`GET ${link.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        client.once('data', (chunk) => {
          assert.match(String(chunk), /^HTTP\/1\.1 200/);
          client.pause();
          resolve();
        });
      });
    });
    client.on('error', () => {});

    const started = Date.now();
    server.child.kill('SIGTERM');
    const code = await Promise.race([
      exited(server.child),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref()),
    ]);
    assert.equal(code, 0, server.output());
    assert.ok(Date.now() - started < 15_000, `exited after ${Date.now() - started} ms`);
  } finally {
    client.destroy();
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
});

test('SIGTERM while a request is under way exits once it is answered, not after the grace period', async () => {
  const port = await freePort();
  const data = fs.mkdtempSync(path.join(dir, 'keep-alive-'));
  const server = await startServer({ PORT: String(port), DATA_DIR: data, LOG_LEVEL: 'warn' });
  const client = new net.Socket();
  try {
    const key = /gta_[A-Za-z0-9]{32}/.exec(server.output())?.[0];
    assert.ok(key, server.output());
    const file = wav(64 * 1024);
    // An upload on a keep-alive connection, its body half sent when the signal comes.
    let answer = '';
    await new Promise<void>((resolve, reject) => {
      client.once('error', reject);
      client.connect(port, '127.0.0.1', () => {
        client.write(
          `POST /v1/files?filename=short.wav HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n` +
            `Authorization: Bearer ${key}\r\nContent-Type: audio/wav\r\nContent-Length: ${file.length}\r\n\r\n`,
        );
        client.write(file.subarray(0, 1024), () => resolve());
      });
    });
    client.on('error', () => {});
    client.on('data', (chunk) => {
      answer += String(chunk);
    });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // And a request sent after it on the same connection, once the process has begun to stop.
    client.write(file.subarray(1024));
    client.write(`GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    const code = await Promise.race([
      exited(server.child),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref()),
    ]);
    assert.match(answer, /^HTTP\/1\.1 201/);
    assert.equal(code, 0, server.output());
    // The answered connection is idle: nothing is left to wait for (the grace period is 5 s).
    assert.ok(Date.now() - started < 4_000, `exited after ${Date.now() - started} ms`);
    // The request that came too late is refused in the error table's shape, to be sent again.
    const late = answer.slice(answer.indexOf('HTTP/1.1', 1));
    assert.match(late, /^HTTP\/1\.1 503 /, answer);
    assert.match(late, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i, late);
    assert.match(late, /\r\nretry-after: 1\r\n/i, late);
    assert.match(late, /\{"error":\{"code":"sg_unavailable","message":"This server is restarting/, late);
  } finally {
    client.destroy();
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
});
