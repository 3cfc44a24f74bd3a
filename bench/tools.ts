import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs `scripts/ensure-bench-tools.sh`, which installs wrk, nginx-light and redis-server from Debian when
 * one is missing (a no-op otherwise). Every bench calls it first, so a fresh machine needs no manual step.
 */
export function ensureBenchTools(): void {
  const script = path.join(import.meta.dirname, '..', 'scripts', 'ensure-bench-tools.sh');
  execFileSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
}

/**
 * How the bench splits the machine's CPUs: the server under load on one set, the load generator on the
 * other, so that neither takes the other's core. With a single CPU nothing can be pinned apart.
 */
export interface CpuPlan {
  /** `taskset -c` list for the server process, or null when nothing is pinned. */
  server: string | null;
  /** `taskset -c` list for the load generator, or null. */
  generator: string | null;
  /** How many CPUs the generator has (its thread count). */
  generatorCpus: number;
}

/** Half the CPUs (at least one) for the generator, the rest for the server; 1 CPU: nothing pinned. */
export function planCpus(cpuCount: number = os.availableParallelism()): CpuPlan {
  if (cpuCount < 2) return { server: null, generator: null, generatorCpus: 1 };
  const generatorCpus = Math.max(1, Math.floor(cpuCount / 2));
  const serverCpus = cpuCount - generatorCpus;
  const range = (from: number, count: number): string =>
    count === 1 ? String(from) : `${from}-${from + count - 1}`;
  return { server: range(0, serverCpus), generator: range(serverCpus, generatorCpus), generatorCpus };
}

/** Pins a running process (all its threads) to `cpus` with taskset; ignored when `cpus` is null. */
export function pinProcess(pid: number, cpus: string | null): void {
  if (cpus === null) return;
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** CPU seconds (user + system) a process has used so far, from /proc; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return (utime + stime) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** USER_HZ of Linux on every architecture Node runs on. */
const CLOCK_TICKS = 100;

/**
 * Seconds each CPU has been busy since boot, by CPU number, from `/proc/stat` (user, nice, system, irq and
 * softirq; idle, I/O wait and the time the hypervisor gave another machine left out); empty where there is
 * no `/proc/stat`. The difference of two readings (`busyBetween`) is what every process pinned to a CPU
 * used, the kernel's work for them included (the loopback's packets, the page cache).
 */
export function busyCpuSeconds(stat?: string): number[] {
  let text = stat;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/stat', 'utf8');
    } catch {
      return [];
    }
  }
  const busy: number[] = [];
  for (const line of text.split('\n')) {
    const match = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const [user, nice, system, , , irq, softirq] = (match[2] ?? '').trim().split(/\s+/).map(Number);
    const ticks = [user, nice, system, irq, softirq].reduce<number>((sum, t) => sum + (t ?? 0), 0);
    busy[Number(match[1])] = ticks / CLOCK_TICKS;
  }
  return busy;
}

/** Each CPU's busy seconds from `before` to `after` (`busyCpuSeconds` readings). */
export function busyBetween(before: readonly number[], after: readonly number[]): number[] {
  return after.map((seconds, cpu) => Math.max(0, seconds - (before[cpu] ?? seconds)));
}

/** A loopback port free right now (the kernel picks it; a server started next binds it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  return address.port;
}

/** Linux's PM QoS request for the CPUs' wake-up latency: held at 0 µs while the file stays open. */
export const CPU_LATENCY_FILE = '/dev/cpu_dma_latency';

/** An idle-state request in force (or not), and how to end it. */
export interface IdleHold {
  /** One line for the bench's header: whether idle CPUs poll, and why not when they do not. */
  description: string;
  release(): void;
}

/**
 * Keeps idle CPUs polling instead of halting while a bench runs, as tuned's latency-performance profile
 * does: a PM QoS request of 0 µs on `CPU_LATENCY_FILE`, in force while the file stays open (root only).
 *
 * Why: a server answering over loopback pays for waking the load generator when its CPU sleeps. On a
 * virtual machine that halts an idle vCPU, that wake-up goes through the hypervisor and costs several µs
 * per response, charged to the server; the slower the server, the more often it finds the generator
 * asleep, so the tax grows with the very cost being measured (docs/performance.md, "The machine").
 * Every server of a run, landmarks included, runs under the same setting. BENCH_IDLE_POLL=0 leaves the
 * machine's idle states alone.
 */
export function holdIdlePolling(env: NodeJS.ProcessEnv, file: string = CPU_LATENCY_FILE): IdleHold {
  if (env.BENCH_IDLE_POLL === '0') {
    return { description: 'idle CPUs: the machine’s own idle states (BENCH_IDLE_POLL=0)', release: () => {} };
  }
  let fd: number;
  try {
    fd = openSync(file, 'w');
    const zero = Buffer.alloc(4);
    writeSync(fd, zero);
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    return {
      description: `idle CPUs: the machine’s own idle states (${file}: ${reason})`,
      release: () => {},
    };
  }
  let open = true;
  return {
    description: `idle CPUs poll instead of halting (${file} held at 0 µs; BENCH_IDLE_POLL=0 to measure without)`,
    release: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
