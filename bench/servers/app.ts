import { serveBenchApp } from './serve-app.ts';

/**
 * The real app on a fresh SQLite database in a temporary folder. BENCH_WORKER=on|off chooses whether the
 * in-process worker runs (as WORKER does in production); BENCH_SIM_SPEED sets the simulator's speed
 * (default 1000: a five-minute generation takes 0.3 s, so tasks finish quickly and do not pile up);
 * RENDER_THREADS passes through (unset: the service's default).
 */
await serveBenchApp({
  name: 'app',
  env: {
    SIM_SPEED: process.env.BENCH_SIM_SPEED ?? '1000',
    WORKER: process.env.BENCH_WORKER === 'off' ? 'off' : 'on',
    RENDER_THREADS: process.env.RENDER_THREADS ?? '',
  },
  startWorker: true,
});
