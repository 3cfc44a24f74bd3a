import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { coalesceTurnWrites } from './turn-writes.ts';

/** A request a raw connection sends (keep-alive, HTTP/1.1's default). */
const GET = 'GET / HTTP/1.1\r\nhost: x\r\n\r\n';

async function listening(
  handler: http.RequestListener,
  options: { beforeCoalescing?: (socket: Socket) => void; coalescing?: boolean } = {},
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer({ keepAlive: true }, handler);
  if (options.beforeCoalescing) server.on('connection', options.beforeCoalescing);
  if (options.coalescing ?? true) coalesceTurnWrites(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

async function closed(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Everything a raw connection receives after sending `request`, until the server closes it. */
async function rawExchange(port: number, request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(request);
  await once(socket, 'close');
  return Buffer.concat(chunks).toString('latin1');
}

async function get(port: number, agent: http.Agent): Promise<http.IncomingMessage> {
  return await new Promise((resolve, reject) =>
    http.get({ host: '127.0.0.1', port, path: '/', agent }, resolve).on('error', reject),
  );
}

async function fetchText(port: number, agent: http.Agent): Promise<string> {
  const response = await get(port, agent);
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

test('the answers of one turn are held until its I/O is done, then sent together in the same turn', async () => {
  const seen: string[] = [];
  const waiting: http.ServerResponse[] = [];
  const { server, port } = await listening((_request, response) => {
    waiting.push(response);
    if (waiting.length < 2) return;
    // Both answers end in one turn, as a turn under load serves many requests.
    for (const [i, each] of waiting.entries()) each.end(`answer ${i}`);
    const sockets = waiting.map((each) => each.socket as Socket);
    seen.push(`held: ${sockets.map((socket) => socket.writableLength > 0).join(',')}`);
    setImmediate(() => seen.push(`after the turn: ${sockets.map((s) => s.writableLength).join(',')}`));
  });
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    const bodies = await Promise.all([fetchText(port, agent), fetchText(port, agent)]);
    agent.destroy();
    assert.deepEqual(bodies.sort(), ['answer 0', 'answer 1']);
    assert.deepEqual(seen, ['held: true,true', 'after the turn: 0,0']);
  } finally {
    await closed(server);
  }
});

test('a large answer streamed in many chunks arrives whole', async () => {
  const body = randomBytes(8 * 1024 * 1024);
  const { server, port } = await listening((_request, response) => {
    response.writeHead(200, { 'content-length': String(body.length) });
    // Many chunks, each written when the one before is done, as a stored file is streamed.
    let offset = 0;
    const next = (): void => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 64 * 1024);
        offset += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', next);
      }
      response.end();
    };
    next();
  });
  try {
    const response = await get(port, new http.Agent({ keepAlive: false }));
    const hash = createHash('sha256');
    let length = 0;
    for await (const chunk of response) {
      hash.update(chunk as Buffer);
      length += (chunk as Buffer).length;
    }
    assert.equal(length, body.length);
    assert.equal(hash.digest('hex'), createHash('sha256').update(body).digest('hex'));
  } finally {
    await closed(server);
  }
});

test('a connection destroyed while it holds a write sends that write first', async () => {
  const { server, port } = await listening((request) => {
    // What a refusal written straight on the socket does (Node's clientError, a shutdown's last answer).
    const socket = request.socket;
    socket.write('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbye!');
    socket.destroy();
  });
  try {
    const received = await rawExchange(port, GET);
    assert.match(received, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.ok(received.endsWith('\r\n\r\nbye!'), received);
  } finally {
    await closed(server);
  }
});

test('a write that throws when it is sent closes its connection instead of leaving it hanging', async () => {
  let failed = 0;
  const { server, port } = await listening((_request, response) => response.end('never sent'), {
    beforeCoalescing: (socket) => {
      socket._write = () => {
        failed += 1;
        throw new Error('the socket refused the write');
      };
      socket.on('error', () => {});
    },
  });
  try {
    const received = await rawExchange(port, GET);
    assert.equal(received, '');
    assert.equal(failed, 1);
  } finally {
    await closed(server);
  }
});

/**
 * How much the old generation grows while a server (on the same process as its clients) gives 1,000
 * answers of 2 KB: 10 connections that each ask again as soon as an answer arrives, as a load generator
 * does, after a warm-up and a major collection, so that the server's long-lived state is old and only what
 * it makes later is young; then three scavenges, which promote whatever is still held.
 */
async function oldGenerationGrowth(coalescing: boolean): Promise<number> {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as (options: { type: 'minor' | 'major'; execution: 'sync' }) => void;
  let served = 0;
  const { server, port } = await listening(
    (_request, response) => {
      served += 1;
      response.end(`${'x'.repeat(2000)} ${served}`);
    },
    { coalescing },
  );
  const answered = async (rounds: number): Promise<void> => {
    const socket = net.connect(port, '127.0.0.1');
    let left = rounds;
    socket.write(GET);
    for await (const chunk of socket as AsyncIterable<Buffer>) {
      if (!chunk.includes('xxx')) continue;
      if (--left === 0) break;
      socket.write(GET);
    }
    socket.destroy();
  };
  const oldSpace = (): number =>
    getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0;
  try {
    await Promise.all(Array.from({ length: 10 }, () => answered(20)));
    collect({ type: 'major', execution: 'sync' });
    const before = oldSpace();
    await Promise.all(Array.from({ length: 10 }, () => answered(100)));
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 3; i++) collect({ type: 'minor', execution: 'sync' });
    return oldSpace() - before;
  } finally {
    await closed(server);
  }
}

test('a turn lets go of its held answers once they are sent: they die young', async () => {
  // A held write kept past its turn (by a structure of the old generation) is moved there by the
  // scavenges, 2 MB of answers here; a server that writes at once keeps nothing.
  const plain = await oldGenerationGrowth(false);
  const coalescing = await oldGenerationGrowth(true);
  assert.ok(
    coalescing < plain + 1_000_000,
    `the old generation grew by ${coalescing} bytes over 1,000 answers, ${plain} without holding writes`,
  );
});
