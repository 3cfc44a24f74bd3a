import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

/** One real API process (`src/main.ts`), as it runs in production. */
export interface ApiProcess {
  /** Base URL, e.g. `http://127.0.0.1:43123`. */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The first start runs the migrations on an empty database, which takes a few seconds. */
const STARTUP_TIMEOUT_MS = 60_000;
const MAIN = path.join(import.meta.dirname, '..', '..', 'src', 'main.ts');

/**
 * Starts `src/main.ts` with the same Node binary as this process (Node 24, which runs `.ts`) and `env`
 * on top of ours, and waits for its `Listening on <url>` line. PORT=0 lets the kernel choose a free port;
 * the line carries the one chosen.
 */
export async function startApiProcess(name: string, env: Record<string, string>): Promise<ApiProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await waitForListening(child, name);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} has no pid`);
  // Keep draining stdout so a chatty process never blocks on a full pipe.
  child.stdout?.resume();
  return {
    url,
    pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function waitForListening(child: ChildProcess, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not listen within ${STARTUP_TIMEOUT_MS} ms`));
    }, STARTUP_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /Listening on (http:\/\/[^\s]+)/.exec(output);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      resolve(match[1]);
    };
    const onExit = (code: number | null, signal: string | null): void => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before listening (code ${code}, signal ${signal})`));
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}
