import os from 'node:os';
import { type ServerChild, startServer } from './child.ts';
import { measureInterleaved } from './interleave.ts';
import type { LoadSpec } from './load.ts';
import { readOptions } from './options.ts';
import { markdownTable, ratioLines, runBench } from './report.ts';
import { CREATE_BODY, createAccount, createFinishedTask, raiseActiveLimit } from './setup.ts';

/**
 * `npm run bench`: a bare node:http baseline, bare Fastify, task polling and task creation of the real
 * app, measured in the same run (interleaved in rounds), so the ratios compare figures taken on the same
 * shared, noisy machine. Each server is a child process; autocannon runs in this process, so the load
 * generator and the server under load each have one of the two cores. Exits 1 when any request failed
 * (socket error, timeout or non-2xx answer).
 */

/** Polling should keep at least half of the bare node:http rate. */
const POLL_TARGET = { name: 'poll', share: 0.5 };

const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

async function main(): Promise<number> {
  const options = readOptions(process.argv.slice(2), process.env);
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(
    `Node ${process.version}, ${os.availableParallelism()} cores (${cpu}); ${options.connections} connections; ` +
      `per scenario ${options.warmupSeconds} s warm-up + ${options.rounds} × ${options.durationSeconds / options.rounds} s\n\n`,
  );

  const servers: ServerChild[] = [];
  const start = async (name: string, env: Record<string, string>): Promise<string> => {
    const server = await startServer(name, {
      env,
      ...(options.profileDir === null ? {} : { profileDir: options.profileDir }),
    });
    servers.push(server);
    return server.url;
  };
  try {
    // Polling: one account, one finished task. The worker runs to finish that task, then idles (one
    // job query a second). Its response body is what the baseline and Fastify servers then send verbatim.
    const pollBase = await start('app', { BENCH_WORKER: 'on' });
    const pollKey = await createAccount(pollBase, 'Bench poll');
    const task = await createFinishedTask(pollBase, pollKey);
    const baselineBase = await start('baseline', { BENCH_BASELINE_BODY: task.body });
    const fastifyBase = await start('fastify', { BENCH_BASELINE_BODY: task.body });

    // Creation, worker off: this measures the API's own work; with the worker on, the simulator's
    // synchronous rendering of each finished model would take the server's core instead. Each connection
    // is a client with an account of its own, which keeps every account far below the 10,000
    // active-task cap (tasks stay queued) and the active-task count in the transaction small.
    const createBase = await start('app', { BENCH_WORKER: 'off' });
    await raiseActiveLimit(createBase);
    const createKeys: string[] = [];
    for (let i = 0; i < options.connections; i++)
      createKeys.push(await createAccount(createBase, `Bench ${i}`));

    const specs: LoadSpec[] = [
      { name: 'baseline', url: `${baselineBase}/` },
      // Not a target, a landmark: the framework's share of the gap between baseline and poll.
      { name: 'fastify (constant body)', url: `${fastifyBase}/` },
      {
        name: 'poll',
        url: `${pollBase}/v1/tasks/${task.id}`,
        headers: { authorization: `Bearer ${pollKey}` },
      },
      {
        name: 'create',
        url: `${createBase}/v1/tasks`,
        method: 'POST',
        headersPerConnection: createKeys.map((key) => ({
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
        })),
        body: CREATE_BODY,
      },
    ];
    const results = await measureInterleaved(specs, options, log);
    const baseline = results[0];
    if (!baseline) throw new Error('no baseline measurement');

    process.stdout.write(`${markdownTable(results, baseline)}\n\n`);
    process.stdout.write(`${ratioLines(results, baseline, POLL_TARGET).join('\n')}\n`);
    process.stdout.write(
      `\nResponse body of baseline, fastify and poll: ${Buffer.byteLength(task.body)} bytes.\n`,
    );
    const failed = results.filter((m) => m.failures > 0);
    for (const m of failed) log(`${m.name} had ${m.failures} failed requests (errors or non-2xx)`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

runBench(main, log);
