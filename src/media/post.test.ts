import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { FetchError } from './fetch.ts';
import { postGuarded } from './post.ts';

describe('postGuarded', () => {
  let server: http.Server;
  let base: string;
  const bodies: string[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        bodies.push(`${req.headers.host} ${req.headers['x-test']} ${body}`);
        if (req.url === '/hang') return;
        if (req.url === '/redirect') {
          res.writeHead(307, { location: `${base}/ok` }).end();
          return;
        }
        if (req.url === '/upgrade') {
          res.socket?.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n');
          return;
        }
        if (req.url === '/big') {
          res.writeHead(200);
          // Never ends: the reader stops at its cap.
          const chunk = Buffer.alloc(64 * 1024, 1);
          const pump = (): void => {
            while (res.write(chunk));
            res.once('drain', pump);
          };
          pump();
          return;
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const allow = { allowAddresses: ['127.0.0.1'], headers: { 'x-test': 'yes' } };

  test('posts the body with the given headers and answers the status', async () => {
    assert.deepEqual(await postGuarded(`${base}/ok`, '{"a":1}', allow), { status: 204 });
    assert.match(bodies.at(-1) as string, /^127\.0\.0\.1:\d+ yes \{"a":1\}$/);
  });

  test('a redirect is answered as it is, never followed', async () => {
    const before = bodies.length;
    assert.deepEqual(await postGuarded(`${base}/redirect`, '{}', allow), { status: 307 });
    assert.equal(bodies.length, before + 1, 'only the first address was called');
  });

  test('a 101 answer is returned as its status, not left pending once the socket is gone', async () => {
    const signal = AbortSignal.timeout(2000);
    assert.deepEqual(await postGuarded(`${base}/upgrade`, '{}', { ...allow, signal }), { status: 101 });
  });

  test('loopback without the test exception, and a name resolving to a private address: blocked, nothing sent', async () => {
    const before = bodies.length;
    await assert.rejects(postGuarded(`${base}/ok`, '{}', { headers: {} }), (e: unknown) => {
      return e instanceof FetchError && e.reason === 'blocked';
    });
    const port = new URL(base).port;
    await assert.rejects(
      postGuarded(`http://hooks.example.test:${port}/ok`, '{}', {
        headers: {},
        lookup: async () => [{ address: '10.1.2.3', family: 4 }],
      }),
      (e: unknown) => e instanceof FetchError && e.reason === 'blocked',
    );
    assert.equal(bodies.length, before);
  });

  test('no answer in time is a timeout; an endless answer body does not hold the caller', async () => {
    await assert.rejects(
      postGuarded(`${base}/hang`, '{}', { ...allow, timeoutMs: 300 }),
      (e: unknown) => e instanceof FetchError && e.reason === 'timeout',
    );
    assert.deepEqual(await postGuarded(`${base}/big`, '{}', allow), { status: 200 });
  });

  test('a closed port is unreachable; an abort is thrown as its reason', async () => {
    await assert.rejects(
      postGuarded('http://127.0.0.1:1/x', '{}', allow),
      (e: unknown) => e instanceof FetchError && e.reason === 'unreachable',
    );
    const stop = new AbortController();
    const pending = postGuarded(`${base}/hang`, '{}', { ...allow, signal: stop.signal });
    stop.abort(new Error('stopping'));
    await assert.rejects(pending, /stopping/);
  });
});
