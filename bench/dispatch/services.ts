import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort, pinProcess } from '../tools.ts';

export interface RedisServer {
  port: number;
  stop(): Promise<void>;
}

/** Debian's redis-server on loopback, a free port, nothing persisted; pinned to `cpus` when given. */
export async function startRedis(cpus: string | null): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) break;
    if (i > 100) throw new Error('redis-server did not start');
    await sleep(50);
  }
  if (child.pid !== undefined) pinProcess(child.pid, cpus);
  return {
    port,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Pins a PostgreSQL server on this machine to `cpus` for a measurement, as Redis is pinned: the worker
 * under test keeps its CPU and the database its own, for both landmarks alike. The server's main process
 * is the parent of the backend that answers `pg_backend_pid()`; backends forked after the pinning inherit
 * it. `restore` gives the main process back its CPUs. A server on another machine (or one this user may
 * not pin) is left alone; `description` says which, for the bench's log.
 */
export async function pinPostgresServer(
  url: string,
  cpus: string | null,
): Promise<{ description: string; restore(): void }> {
  const untouched = (why: unknown) => ({
    description: `PostgreSQL not pinned (${why instanceof Error ? (why.message.split('\n')[0] ?? '') : String(why)})`,
    restore: () => {},
  });
  if (cpus === null) return untouched('one CPU');
  // The server's main process is the parent of this connection's backend, read while the backend lives:
  // once the connection ends its backend exits, and a read of its /proc entry after that raced the exit
  // (the server was then often left unpinned, on the worker's CPU too).
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let postmaster: number;
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    postmaster = parentOf(Number(rows[0]?.pid));
  } catch (error) {
    return untouched(error);
  } finally {
    await client.end();
  }
  try {
    const before = /list:\s*(\S+)/.exec(
      execFileSync('taskset', ['-p', '-c', String(postmaster)], { encoding: 'utf8' }),
    )?.[1];
    if (before === undefined) throw new Error('taskset printed no CPU list');
    execFileSync('taskset', ['-p', '-c', cpus, String(postmaster)], { stdio: 'ignore' });
    return {
      description: `PostgreSQL (process ${postmaster}) on CPU ${cpus}`,
      restore: () => execFileSync('taskset', ['-p', '-c', before, String(postmaster)], { stdio: 'ignore' }),
    };
  } catch (error) {
    return untouched(error);
  }
}

/** The parent process of `pid` (`/proc/<pid>/stat`'s fourth field); throws when it has none. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  if (!Number.isInteger(parent) || parent <= 1) throw new Error('no parent process');
  return parent;
}
