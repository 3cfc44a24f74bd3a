import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A PostgreSQL server for a bench: its URL, and how to stop it when the bench started it. */
export interface BenchPostgres {
  url: string;
  stop(): void;
}

/**
 * The bench's PostgreSQL server: BENCH_DATABASE_URL when set (left running); otherwise a cluster of the
 * bench's own, started (and installed when missing) by `scripts/test-services.sh` and stopped and dropped
 * by `stop`. Its name and ports are not the test runs' (`gtabench` on BENCH_PG_PORT, 55440 unless set,
 * and the unused S3 fake of the script on the next port), so a bench never leaves a server that a later
 * test run would share, and never stops one of the test runs' (their PG_CLUSTER and PG_PORT are ignored).
 */
export function benchPostgres(env: NodeJS.ProcessEnv): BenchPostgres {
  const given = env.BENCH_DATABASE_URL?.trim();
  if (given) return { url: given, stop: () => {} };
  const script = path.join(import.meta.dirname, '..', 'scripts', 'test-services.sh');
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-services-'));
  const port = Number(env.BENCH_PG_PORT?.trim() || 55440);
  if (!Number.isInteger(port) || port < 1 || port > 65534) throw new Error('BENCH_PG_PORT: not a port');
  const services = {
    ...env,
    PG_CLUSTER: 'gtabench',
    PG_PORT: String(port),
    S3_PORT: String(port + 1),
    STATE_DIR: stateDir,
  };
  const run = (verb: 'start' | 'stop'): string =>
    execFileSync('bash', [script, verb], {
      encoding: 'utf8',
      env: services,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    run('stop');
    fs.rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const url = /TEST_DATABASE_URL=(\S+)/.exec(run('start'))?.[1];
    if (!url) throw new Error('scripts/test-services.sh printed no TEST_DATABASE_URL');
    // A bench ended by Ctrl-C or an error still leaves no server behind.
    process.once('exit', stop);
    return { url, stop };
  } catch (error) {
    stop();
    throw error;
  }
}
