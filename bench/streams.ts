import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { ServerReply, ServerRequest } from './streams/server.ts';

/**
 * `npm run bench:streams`: 1,000 open event streams (GET /v1/tasks/{id}/events) on one API process.
 * The server runs the real app in a child process (bench/streams/server.ts); the clients are raw HTTP
 * connections in this process with a small event-stream parser. Measured: the server's memory per open
 * stream (RSS and V8 heap after a full collection, before and after opening them), and the latency from a
 * task transition's commit (timestamped by the server) to the event's arrival at the client, p50/p99.
 * `BENCH_STREAMS` and `BENCH_TRANSITIONS` change the counts; `DATABASE_URL` picks the database (default:
 * a fresh SQLite file).
 */

const STREAMS = positive('BENCH_STREAMS', 1000);
const TRANSITIONS = positive('BENCH_TRANSITIONS', 400);
/** Tasks per account: the default limit of unfinished tasks per model and account. */
const TASKS_PER_ACCOUNT = 10;
const ADMIN_TOKEN = 'bench-streams-admin-token-0123';

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

const log = (line: string): void => {
  process.stderr.write(`bench:streams: ${line}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = (): number => performance.timeOrigin + performance.now();

/** One request to the server over IPC, answered by the first reply of the expected type. */
function ask<T extends ServerReply['type']>(
  child: ChildProcess,
  request: ServerRequest,
  type: T,
): Promise<Extract<ServerReply, { type: T }>> {
  return new Promise((resolve) => {
    const onMessage = (reply: ServerReply): void => {
      if (reply.type !== type) return;
      child.off('message', onMessage);
      resolve(reply as Extract<ServerReply, { type: T }>);
    };
    child.on('message', onMessage);
    child.send(request);
  });
}

async function json(
  base: string,
  method: string,
  url: string,
  token: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(data)}`);
  return data;
}

/** An open stream: calls `onEvent(id, receivedAt)` for each `task` event; resolves once connected. */
function openStream(
  agent: http.Agent,
  url: string,
  key: string,
  onEvent: (id: string, at: number) => void,
): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream answered ${response.statusCode}`));
        return;
      }
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const at = now();
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          if (!block.startsWith('event: task')) continue;
          const id = /\nid: (\d+)/.exec(block)?.[1];
          if (id !== undefined) onEvent(id, at);
        }
      });
      resolve(request);
    });
    request.on('error', reject);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-streams-'));
  const child = fork(path.join(import.meta.dirname, 'streams', 'server.ts'), [], {
    execArgv: ['--expose-gc'],
    env: {
      ...process.env,
      DATA_DIR: tmp,
      ADMIN_TOKEN,
      WORKER: 'off',
      LOG_LEVEL: 'warn',
      RENDER_THREADS: '0',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  try {
    const { port } = await new Promise<Extract<ServerReply, { type: 'ready' }>>((resolve, reject) => {
      child.once('message', (m: ServerReply) =>
        m.type === 'ready' ? resolve(m) : reject(new Error('no ready')),
      );
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const base = `http://127.0.0.1:${port}`;
    const accounts = Math.ceil(STREAMS / TASKS_PER_ACCOUNT);
    log(`server on ${base}; ${accounts} accounts × ${TASKS_PER_ACCOUNT} tasks`);

    const tasks: Array<{ id: string; key: string }> = [];
    for (let batch = 0; batch < accounts; batch += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, accounts - batch) }, async () => {
          const account = await json(base, 'POST', '/admin/v1/accounts', ADMIN_TOKEN, { name: 'bench' });
          await json(base, 'POST', `/admin/v1/accounts/${account.id}/credits`, ADMIN_TOKEN, {
            amount_minor: 100_000_000,
            reference: `bench-${account.id}`,
          });
          const key = (await json(base, 'POST', `/admin/v1/accounts/${account.id}/keys`, ADMIN_TOKEN, {}))
            .key as string;
          for (let i = 0; i < TASKS_PER_ACCOUNT && tasks.length < STREAMS; i++) {
            const task = await json(base, 'POST', '/v1/tasks', key, {
              model: 'model-3d',
              settings: { task_type: 'text_to_model', prompt: `a bench chair ${i}` },
            });
            tasks.push({ id: task.id as string, key });
          }
        }),
      );
    }
    tasks.length = Math.min(tasks.length, STREAMS);
    log(`${tasks.length} tasks queued`);

    // Warm the stream path once, so code compiled on first use is not counted per stream.
    const warm = await openStream(
      agent,
      `${base}/v1/tasks/${tasks[0]?.id}/events`,
      tasks[0]?.key ?? '',
      () => {},
    );
    await sleep(200);
    warm.destroy();
    await sleep(500);

    const before = await ask(child, { type: 'memory' }, 'memory');
    const received = new Map<string, number>();
    const connected = new Set<string>();
    const requests: http.ClientRequest[] = [];
    const openStarted = now();
    for (let i = 0; i < tasks.length; i += 100) {
      requests.push(
        ...(await Promise.all(
          tasks.slice(i, i + 100).map(({ id, key }) =>
            openStream(agent, `${base}/v1/tasks/${id}/events`, key, (eventId, at) => {
              if (eventId === '0') connected.add(id);
              else if (!received.has(`${id}:${eventId}`)) received.set(`${id}:${eventId}`, at);
            }),
          ),
        )),
      );
    }
    while (connected.size < tasks.length) await sleep(20);
    const openMs = now() - openStarted;
    await sleep(500);
    const after = await ask(child, { type: 'memory' }, 'memory');
    log(`${requests.length} streams open in ${openMs.toFixed(0)} ms`);

    // Transitions one after another, 5 ms apart: queued → running (revision 1), then progress (revision 2).
    const committed = new Map<string, { startedAt: number; committedAt: number }>();
    for (let i = 0; i < TRANSITIONS; i++) {
      const round = Math.floor(i / tasks.length);
      const task = tasks[i % tasks.length] as { id: string };
      const kind = round === 0 ? 'running' : 'progress';
      const reply = await ask(
        child,
        { type: 'transition', taskId: task.id, kind, progress: 10 * round },
        'transition',
      );
      committed.set(`${task.id}:${round + 1}`, reply);
      await sleep(5);
    }
    await sleep(1000);
    const latencies: number[] = [];
    const fromStart: number[] = [];
    let missing = 0;
    for (const [key, at] of committed) {
      const got = received.get(key);
      if (got === undefined) missing += 1;
      else {
        latencies.push(got - at.committedAt);
        fromStart.push(got - at.startedAt);
      }
    }
    latencies.sort((a, b) => a - b);
    fromStart.sort((a, b) => a - b);

    const closeStarted = now();
    child.send({ type: 'stop' } satisfies ServerRequest);
    await new Promise((resolve) => child.once('exit', resolve));
    const closeMs = now() - closeStarted;

    const n = requests.length;
    const lines = [
      `Node ${process.version}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${process.env.DATABASE_URL?.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}`,
      '',
      '| figure | value |',
      '|---|---|',
      `| open streams | ${n} (${Math.ceil(n / TASKS_PER_ACCOUNT)} accounts) |`,
      `| time to open them all (100 at a time) | ${openMs.toFixed(0)} ms |`,
      `| server RSS before / after | ${mib(before.rss)} / ${mib(after.rss)} |`,
      `| server RSS per stream | ${kib((after.rss - before.rss) / n)} |`,
      `| server V8 heap per stream (after GC) | ${kib((after.heapUsed - before.heapUsed) / n)} |`,
      `| transitions measured (missing) | ${latencies.length} (${missing}) |`,
      `| commit → client, p50 | ${percentile(latencies, 50).toFixed(1)} ms |`,
      `| commit → client, p99 | ${percentile(latencies, 99).toFixed(1)} ms |`,
      `| commit → client, max | ${(latencies.at(-1) ?? 0).toFixed(1)} ms |`,
      `| transaction start → client, p50 / p99 | ${percentile(fromStart, 50).toFixed(1)} / ${percentile(fromStart, 99).toFixed(1)} ms |`,
      `| server shutdown with all streams open | ${closeMs.toFixed(0)} ms |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (missing > 0) process.exitCode = 1;
  } finally {
    agent.destroy();
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
