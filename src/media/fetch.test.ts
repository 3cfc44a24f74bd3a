import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it, mock } from 'node:test';
import { FetchError, type FetchFailure, type FetchOptions, fetchToFile, type LookupFn } from './fetch.ts';

const ALLOW = ['127.0.0.1'];
let dir = '';
let base = '';
let port = 0;
let server: http.Server;
/** Hosts every outgoing request was aimed at (http.request and https.request are wrapped). */
const requestedHosts: string[] = [];

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', base);
  const path = url.pathname;
  if (path === '/ok') {
    res.setHeader('content-length', '11');
    res.end('hello world');
  } else if (path === '/host') {
    res.end(req.headers.host ?? '');
  } else if (path === '/declared-big') {
    res.setHeader('content-length', '1000');
    res.end('x'.repeat(1000));
  } else if (path === '/stream-big') {
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent >= 1_000_000) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write('y'.repeat(100));
      sent += 100;
    }, 2);
  } else if (path === '/empty') {
    res.end();
  } else if (path === '/missing') {
    res.statusCode = 404;
    res.end('nope');
  } else if (path === '/hang') {
    // never answers
  } else if (path === '/upgrade') {
    res.socket?.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n');
  } else if (path === '/hang-body') {
    res.writeHead(200);
    res.write('partial');
  } else if (path === '/slow-head') {
    setTimeout(() => res.end('late'), 250);
  } else if (path.startsWith('/redirect/')) {
    const left = Number(path.slice('/redirect/'.length));
    res.writeHead(left > 0 ? 302 : 200, left > 0 ? { location: `/redirect/${left - 1}` } : {});
    res.end(left > 0 ? '' : 'arrived');
  } else if (path === '/to') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), {
      location: url.searchParams.get('url') ?? '',
    });
    res.end();
  } else {
    res.statusCode = 500;
    res.end();
  }
}

async function expectFailure(promise: Promise<unknown>, reason: FetchFailure): Promise<FetchError> {
  const error = await promise.then(
    () => assert.fail(`expected ${reason}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof FetchError, String(error));
  assert.equal(error.reason, reason, error.message);
  return error;
}

async function leftovers(): Promise<string[]> {
  return readdir(dir);
}

function options(extra: Partial<FetchOptions> = {}): FetchOptions {
  return { dir, maxBytes: 1_000_000, totalTimeoutMs: 5000, allowAddresses: ALLOW, ...extra };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'media-fetch-'));
  server = http.createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  // Safety net: any request to something other than loopback fails here instead of leaving the machine.
  for (const module of [http, https]) {
    const original = module.request;
    mock.method(module, 'request', (...args: Parameters<typeof http.request>) => {
      const target = args.find(
        (a): a is http.RequestOptions => typeof a === 'object' && a !== null && !(a instanceof URL),
      );
      const host = String(target?.host ?? target?.hostname ?? '');
      requestedHosts.push(host);
      if (host !== '127.0.0.1' && host !== '::1') throw new Error(`test tried to reach ${host}`);
      return (original as typeof http.request)(...args);
    });
  }
});
after(async () => {
  mock.restoreAll();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  requestedHosts.length = 0;
});

describe('fetchToFile downloads', () => {
  it("[10.17] tells the meter every chunk's size; the meter's refusal ends the download and leaves no file", async () => {
    let counted = 0;
    const file = await fetchToFile(
      `${base}/ok`,
      options({
        meter: async (bytes) => {
          counted += bytes;
        },
      }),
    );
    assert.equal(counted, 11);
    await rm(file.path);
    const budget = new AbortController();
    const refusal = new Error('over the budget');
    const error = await fetchToFile(
      `${base}/ok`,
      options({
        signal: budget.signal,
        meter: async () => {
          budget.abort(refusal);
          throw refusal;
        },
      }),
    ).then(
      () => assert.fail('expected the refusal'),
      (e: unknown) => e,
    );
    assert.equal(error, refusal);
    assert.deepEqual(await leftovers(), []);
  });

  it('stores the body in a new uniquely named file', async () => {
    const file = await fetchToFile(`${base}/ok`, options());
    assert.equal(file.sizeBytes, 11);
    assert.equal(file.finalUrl, `${base}/ok`);
    assert.match(file.path, /[0-9a-f-]{36}$/);
    assert.equal(await readFile(file.path, 'utf8'), 'hello world');
    await rm(file.path);
  });

  it('connects to the checked address of a name and keeps the name in the Host header', async () => {
    const lookup: LookupFn = async () => [{ address: '127.0.0.1', family: 4 }];
    const file = await fetchToFile(`http://media.example:${port}/host`, options({ lookup }));
    assert.equal(await readFile(file.path, 'utf8'), `media.example:${port}`);
    assert.deepEqual(requestedHosts, ['127.0.0.1']);
    await rm(file.path);
  });

  it('follows up to maxRedirects redirects and reports the final URL', async () => {
    const file = await fetchToFile(`${base}/redirect/3`, options({ maxRedirects: 3 }));
    assert.equal(file.finalUrl, `${base}/redirect/0`);
    assert.equal(await readFile(file.path, 'utf8'), 'arrived');
    await rm(file.path);
    await expectFailure(fetchToFile(`${base}/redirect/4`, options({ maxRedirects: 3 })), 'bad_status');
    await expectFailure(fetchToFile(`${base}/redirect/1`, options({ maxRedirects: 0 })), 'bad_status');
  });

  it('waits for a slow answer once connected (the connect timeout only covers connecting)', async () => {
    const file = await fetchToFile(`${base}/slow-head`, options({ connectTimeoutMs: 50 }));
    assert.equal(file.sizeBytes, 4);
    await rm(file.path);
  });
});

describe('fetchToFile failures', () => {
  it('refuses a declared Content-Length over the cap', async () => {
    await expectFailure(fetchToFile(`${base}/declared-big`, options({ maxBytes: 100 })), 'too_large');
    assert.deepEqual(await leftovers(), []);
  });

  it('stops a chunked body as soon as it passes the cap and deletes the partial file', async () => {
    const started = Date.now();
    await expectFailure(fetchToFile(`${base}/stream-big`, options({ maxBytes: 250 })), 'too_large');
    // The whole body would take 20 s to arrive.
    assert.ok(Date.now() - started < 5000);
    assert.deepEqual(await leftovers(), []);
  });

  it('times out on a server that never answers, and on a body that stalls', async () => {
    await expectFailure(fetchToFile(`${base}/hang`, options({ totalTimeoutMs: 200 })), 'timeout');
    await expectFailure(fetchToFile(`${base}/hang-body`, options({ totalTimeoutMs: 200 })), 'timeout');
    assert.deepEqual(await leftovers(), []);
  });

  it("rethrows the caller's abort reason", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await assert.rejects(fetchToFile(`${base}/hang`, options({ signal: controller.signal })), /stop/);
  });

  it('empty bodies, error statuses, unreachable ports', async () => {
    await expectFailure(fetchToFile(`${base}/empty`, options()), 'empty');
    await expectFailure(fetchToFile(`${base}/missing`, options()), 'bad_status');
    await expectFailure(fetchToFile(`${base}/to?status=302&url=`, options()), 'bad_status');
    await expectFailure(fetchToFile(`${base}/to?status=300&url=/ok`, options()), 'bad_status');
    // Node closes an unasked-for 101 with neither a response nor an error: the download must still end.
    await expectFailure(fetchToFile(`${base}/upgrade`, options()), 'bad_status');
    await expectFailure(fetchToFile('http://127.0.0.1:1/', options()), 'unreachable');
    const none: LookupFn = async () => [];
    await expectFailure(fetchToFile('http://nowhere.example/', options({ lookup: none })), 'unreachable');
    const fails: LookupFn = async () => Promise.reject(new Error('ENOTFOUND'));
    await expectFailure(fetchToFile('http://nowhere.example/', options({ lookup: fails })), 'unreachable');
    assert.deepEqual(await leftovers(), []);
  });

  it('refuses URLs that are not plain http(s) without connecting', async () => {
    for (const url of [
      'ftp://127.0.0.1/x',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'gopher://127.0.0.1:70/',
      'not a url',
      `http://user:pass@127.0.0.1:${port}/ok`,
      `http://user@127.0.0.1:${port}/ok`,
      'http://127.0.0.1:0/ok',
      'https://example.com:00/ok',
      `http://127.0.0.1:${port}/o\nk`,
    ]) {
      await expectFailure(fetchToFile(url, options()), 'bad_url');
    }
    assert.deepEqual(requestedHosts, []);
  });
});

describe('fetchToFile address guard (refused before any connection)', () => {
  const blockedUrls = [
    `http://127.0.0.1:${1}/`,
    'http://127.0.0.2/',
    'http://localhost/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.1/',
    'http://0x7f000001/',
    'http://127.1/',
    'http://0/',
    'http://0.0.0.0/',
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://172.31.255.254/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/',
    'http://[::]/',
    'http://[fc00::1]/',
    'http://[fd00:ec2::254]/latest/meta-data',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:7f00:1::]/',
    'https://127.0.0.1/',
    'https://[::1]:8443/',
  ];
  for (const url of blockedUrls) {
    it(url, async () => {
      const started = Date.now();
      await expectFailure(fetchToFile(url, { dir, maxBytes: 1000 }), 'blocked');
      assert.ok(Date.now() - started < 5000, 'refused without waiting for a connection');
      assert.deepEqual(requestedHosts, []);
    });
  }

  it('a name whose lookup gives a blocked address is refused; the lookup is the only step taken', async () => {
    const looked: string[] = [];
    const lookup: LookupFn = async (hostname) => {
      looked.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    await expectFailure(
      fetchToFile(`http://media.example:${port}/ok`, { dir, maxBytes: 1000, lookup }),
      'blocked',
    );
    assert.deepEqual(looked, ['media.example']);
    assert.deepEqual(requestedHosts, []);
  });

  it('a name with ANY blocked address is refused, even if another is allowed (rebinding)', async () => {
    const lookup: LookupFn = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    await expectFailure(fetchToFile(`http://media.example:${port}/ok`, options({ lookup })), 'blocked');
    assert.deepEqual(requestedHosts, []);
  });

  for (const target of [
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data',
    `http://[::1]:${1}/`,
    'http://[::ffff:127.0.0.1]/',
    'http://2130706434/', // 127.0.0.2: loopback, but not the allowed test address
    'http://0x7f.2/',
  ]) {
    it(`a redirect from the allowed server to ${target} is refused`, async () => {
      for (const status of [301, 307]) {
        requestedHosts.length = 0;
        const url = `${base}/to?status=${status}&url=${encodeURIComponent(target)}`;
        await expectFailure(fetchToFile(url, options()), 'blocked');
        assert.deepEqual(requestedHosts, ['127.0.0.1'], 'only the first hop connected');
      }
    });
  }

  it('a redirect to another scheme is refused as bad_url', async () => {
    await expectFailure(
      fetchToFile(`${base}/to?url=${encodeURIComponent('file:///etc/passwd')}`, options()),
      'bad_url',
    );
  });
});
