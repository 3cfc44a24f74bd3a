import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
 * The PostgreSQL server of the bench: BENCH_DATABASE_URL when set; otherwise the project's test cluster,
 * started (and installed when missing) by `scripts/test-services.sh start` with the caller's PG_CLUSTER,
 * PG_PORT, S3_PORT and STATE_DIR. The bench creates a throw-away database on it.
 */
export function postgresServerUrl(env: NodeJS.ProcessEnv): string {
  const given = env.BENCH_DATABASE_URL?.trim();
  if (given) return given;
  const script = path.join(import.meta.dirname, '..', '..', 'scripts', 'test-services.sh');
  const printed = execFileSync('bash', [script, 'start'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = /TEST_DATABASE_URL=(\S+)/.exec(printed)?.[1];
  if (!url) throw new Error('scripts/test-services.sh printed no TEST_DATABASE_URL');
  return url;
}
