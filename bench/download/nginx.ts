import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../tools.ts';

/** A running nginx of the download bench: the landmark serving the same bytes from disk. */
export interface Nginx {
  url: string;
  /** The master's process id; the worker is its child. */
  pid: number;
  /** Process ids of master and worker (for CPU sampling). */
  pids(): number[];
  stop(): Promise<void>;
}

/**
 * The configuration: `daemon off` so the bench owns the process and stops it; `worker_processes 1`
 * because the app under test is one Node process (one event loop) pinned to the same CPUs, so one worker
 * (one event loop) is the like-for-like landmark; `sendfile on`, nginx's own fast path for files (the
 * kernel copies file pages to the socket); access log off as the app logs nothing either. Every file it
 * writes (pid, logs, temp folders) stays in `dir`.
 */
export function nginxConf(dir: string, root: string, port: number): string {
  return `daemon off;
worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  default_type application/octet-stream;
  sendfile on;
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path ${path.join(dir, 'client_body')};
  proxy_temp_path ${path.join(dir, 'proxy')};
  fastcgi_temp_path ${path.join(dir, 'fastcgi')};
  uwsgi_temp_path ${path.join(dir, 'uwsgi')};
  scgi_temp_path ${path.join(dir, 'scgi')};
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`;
}

/** Children of a process, from /proc (the nginx worker of its master). */
function childrenOf(pid: number): number[] {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Starts Debian's nginx on a loopback port serving `root`, pinned with taskset to `cpus` (its worker
 * inherits the pinning), and waits until it answers.
 */
export async function startNginx(options: {
  dir: string;
  root: string;
  cpus: string | null;
}): Promise<Nginx> {
  const port = await freePort();
  const conf = path.join(options.dir, 'nginx.conf');
  fs.writeFileSync(conf, nginxConf(options.dir, options.root, port));
  const binary = fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  const args = ['-p', options.dir, '-e', path.join(options.dir, 'error.log'), '-c', conf];
  const child: ChildProcess = options.cpus
    ? spawn('taskset', ['-c', options.cpus, binary, ...args], { stdio: ['ignore', 'inherit', 'inherit'] })
    : spawn(binary, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error('nginx did not start');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = fs.readFileSync(path.join(options.dir, 'error.log'), 'utf8');
      throw new Error(`nginx exited with ${child.exitCode}: ${log}`);
    }
    try {
      await fetch(`${url}/`, { method: 'HEAD' });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error('nginx did not answer within 10 s');
      await sleep(50);
    }
  }
  return {
    url,
    pid,
    pids: () => [pid, ...childrenOf(pid)],
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      // SIGQUIT: graceful shutdown (the worker finishes, the pid file is removed).
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
