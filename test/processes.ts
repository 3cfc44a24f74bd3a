import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/** The project's root: child processes run `src/main.ts` and `src/worker-main.ts` from here. */
export const ROOT = path.resolve(import.meta.dirname, '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Every child still alive is killed when the test file's process exits, even after a failed test. */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface Server {
  child: ChildProcess;
  output: () => string;
  base: string;
}

/** Starts `script` as a child process and waits until its output shows `readyText`. */
export async function startProcess(
  script: string,
  env: Record<string, string>,
  readyText: string,
): Promise<Server> {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: 'pipe',
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  const deadline = Date.now() + 20_000;
  while (!out.includes(readyText)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      // A child that never got ready must not linger holding its port or its jobs.
      child.kill('SIGKILL');
      throw new Error(`${script} did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => out, base: `http://127.0.0.1:${env.PORT ?? 0}` };
}

/** Starts the real API process (`node src/main.ts`, what `npm start` runs) and waits until it listens. */
export function startServer(env: Record<string, string>): Promise<Server> {
  return startProcess('src/main.ts', env, 'Listening on');
}

/** Starts a worker alone (`npm run worker`) and waits until it runs. */
export function startWorker(env: Record<string, string>): Promise<Server> {
  return startProcess('src/worker-main.ts', { ...env, LOG_LEVEL: 'info' }, 'worker started');
}

export async function exited(child: ChildProcess): Promise<number | null> {
  // A child ended by a signal has no exit code, only a signal code.
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/** Runs `script` (a process that is expected to stop by itself) to its end: its exit code and all it wrote. */
export async function runToExit(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [script], { cwd: ROOT, env, stdio: 'pipe' });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  return { code: await exited(child), out };
}
