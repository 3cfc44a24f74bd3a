import fs from 'node:fs';

/**
 * CPU seconds used by each party during a run, read from /proc (Linux). On a 2-core machine the API
 * processes, PostgreSQL and the load generator share the cores, so these figures say who had them.
 */
export interface CpuSample {
  /** Wall clock, seconds. */
  wall: number;
  /** CPU seconds of each API process. */
  api: number[];
  /** CPU seconds of all PostgreSQL processes, exited backends included. */
  postgres: number;
  /** CPU seconds of this process: autocannon. */
  loadgen: number;
  /** Busy and total CPU seconds of the whole machine (all cores). */
  machineBusy: number;
  machineTotal: number;
}

/** Cores busy on average between two samples. */
export interface CpuShare {
  api: number[];
  postgres: number;
  loadgen: number;
  machine: number;
}

/** USER_HZ: the unit of /proc times; 100 on every mainstream Linux build. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  comm: string;
  ppid: number;
  /** utime + stime, ticks. */
  own: number;
  /** cutime + cstime: children that exited and were reaped, ticks. */
  children: number;
}

function readStat(pid: string | number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited meanwhile
  }
  // comm may contain spaces and parentheses: the fields proper start after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  const at = (i: number): number => Number(fields[i - 3] ?? 0);
  return { comm, ppid: at(4), own: at(14) + at(15), children: at(16) + at(17) };
}

/**
 * PostgreSQL forks a backend per connection; a backend that exits (the pool closes idle ones) moves its
 * time into the postmaster's children counters once reaped. Live processes' own time plus the
 * postmasters' children time therefore stays monotonic.
 */
function postgresTicks(): number {
  const stats = new Map<number, ProcStat>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat?.comm === 'postgres') stats.set(Number(entry), stat);
  }
  let ticks = 0;
  for (const stat of stats.values()) ticks += stat.own + (stats.has(stat.ppid) ? 0 : stat.children);
  return ticks;
}

function machineTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are the idle ones.
  const total = values.slice(0, 8).reduce((sum, v) => sum + v, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

export function sampleCpu(apiPids: readonly number[]): CpuSample {
  const usage = process.cpuUsage();
  const machine = machineTicks();
  return {
    wall: performance.now() / 1000,
    api: apiPids.map((pid) => (readStat(pid)?.own ?? 0) / TICKS_PER_SECOND),
    postgres: postgresTicks() / TICKS_PER_SECOND,
    loadgen: (usage.user + usage.system) / 1e6,
    machineBusy: machine.busy / TICKS_PER_SECOND,
    machineTotal: machine.total / TICKS_PER_SECOND,
  };
}

/** Average cores busy per party from `before` to `after`. */
export function cpuShare(before: CpuSample, after: CpuSample, cores: number): CpuShare {
  const wall = after.wall - before.wall;
  const perWall = (used: number): number => (wall > 0 ? used / wall : 0);
  const total = after.machineTotal - before.machineTotal;
  return {
    api: after.api.map((seconds, i) => perWall(seconds - (before.api[i] ?? 0))),
    postgres: perWall(after.postgres - before.postgres),
    loadgen: perWall(after.loadgen - before.loadgen),
    machine: total > 0 ? ((after.machineBusy - before.machineBusy) / total) * cores : 0,
  };
}

/** Adds CPU shares weighted by their run's seconds (a scenario's rounds). */
export function averageShares(shares: ReadonlyArray<{ share: CpuShare; seconds: number }>): CpuShare {
  const seconds = shares.reduce((sum, s) => sum + s.seconds, 0) || 1;
  const weigh = (pick: (share: CpuShare) => number): number =>
    shares.reduce((sum, s) => sum + pick(s.share) * s.seconds, 0) / seconds;
  const width = Math.max(0, ...shares.map((s) => s.share.api.length));
  return {
    api: Array.from({ length: width }, (_, i) => weigh((share) => share.api[i] ?? 0)),
    postgres: weigh((share) => share.postgres),
    loadgen: weigh((share) => share.loadgen),
    machine: weigh((share) => share.machine),
  };
}
