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
  const untouched = (why: string) => ({ description: `PostgreSQL not pinned (${why})`, restore: () => {} });
  if (cpus === null) return untouched('one CPU');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let backend: number;
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    backend = Number(rows[0]?.pid);
  } finally {
    await client.end();
  }
  try {
    const stat = readFileSync(`/proc/${backend}/stat`, 'utf8');
    const postmaster = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(postmaster) || postmaster <= 1) throw new Error('no parent process');
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
    return untouched(error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error));
  }
}
