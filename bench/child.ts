import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { isReadyMessage, type StopMessage } from './servers/messages.ts';
import { pinProcess } from './tools.ts';

export interface ServerChild {
  /** Base URL, e.g. `http://127.0.0.1:43123`. */
  url: string;
  /** The child's process id (for CPU sampling). */
  pid: number;
  /** The child itself, for benches that talk to it over IPC beyond ready/stop. */
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface ServerChildOptions {
  /** Extra environment of the child. */
  env?: Record<string, string>;
  /** When set, the child writes a V8 CPU profile (`--cpu-prof`) into this folder on exit. */
  profileDir?: string;
  /** `taskset -c` CPU list the child (all its threads) is pinned to once ready; null: not pinned. */
  cpus?: string | null;
}

const STARTUP_TIMEOUT_MS = 30_000;

/**
 * The V8 flags the service runs with (`npm start`, `npm run worker`; a unit test keeps the two the same),
 * given to every bench server, landmarks included, so each is measured as it would run. V8 sizes the young
 * generation from the machine's memory: 32 MiB semi-spaces here, whose scavenges were slower and far
 * longer (p99 of a poll 22 ms instead of 2 ms, docs/performance.md) than with 8 MiB. Allocation-site
 * pretenuring sometimes decided, under load, to allocate the HTTP objects of every request in the old
 * generation: half the runs of a server then stayed a third slower to their end.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=8',
  '--no-allocation-site-pretenuring',
  '--expose-gc',
];

/**
 * Starts `bench/servers/<name>.ts` in its own Node process (same Node binary as the parent) and waits for
 * it to report its port. A separate process keeps the load generator off the server's core.
 */
export async function startServer(name: string, options: ServerChildOptions = {}): Promise<ServerChild> {
  const script = path.join(import.meta.dirname, 'servers', `${name}.ts`);
  const execArgv = [
    ...SERVICE_NODE_FLAGS,
    // An experiment's flags after the service's own, so that they win (`--trace-gc`, another semi-space).
    ...(process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
    ...(options.profileDir
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${options.profileDir}`,
          `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`,
        ]
      : []),
  ];
  const child = fork(script, [], {
    execArgv,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await waitForPort(child, name);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`server ${name} has no process id`);
  pinProcess(pid, options.cpus ?? null);
  return {
    url: `http://127.0.0.1:${port}`,
    pid,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      const stop: StopMessage = { type: 'stop' };
      child.send(stop);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function waitForPort(child: ChildProcess, name: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server ${name} did not start within ${STARTUP_TIMEOUT_MS} ms`));
    }, STARTUP_TIMEOUT_MS);
    child.on('message', (message) => {
      if (!isReadyMessage(message)) return;
      clearTimeout(timer);
      resolve(message.port);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server ${name} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });
}
