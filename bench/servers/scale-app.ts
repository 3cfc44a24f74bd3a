import { serveBenchApp } from './serve-app.ts';

/**
 * The real app on the database of BENCH_SCALE_DATABASE_URL (filled by `npm run bench:scale`).
 * BENCH_WORKER=on|off chooses whether the in-process worker runs; SIM_SPEED passes through (default 100:
 * a five-minute generation takes 3 s), and so does RENDER_THREADS (unset: the service's default).
 */
const databaseUrl = process.env.BENCH_SCALE_DATABASE_URL;
if (!databaseUrl) throw new Error('BENCH_SCALE_DATABASE_URL is not set');
await serveBenchApp({
  name: 'scale',
  env: {
    DATABASE_URL: databaseUrl,
    SIM_SPEED: process.env.SIM_SPEED ?? '100',
    WORKER: process.env.BENCH_WORKER === 'on' ? 'on' : 'off',
    RENDER_THREADS: process.env.RENDER_THREADS ?? '',
  },
  startWorker: true,
});
