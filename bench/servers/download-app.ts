import { FixedFileGenerator } from '../download/generator.ts';
import { serveBenchApp } from './serve-app.ts';

/**
 * The real app for `npm run bench:download` (fresh SQLite database, local file storage under a temporary
 * DATA_DIR, in-process worker), except that every run's result is a copy of BENCH_ARTIFACT_FILE: a task
 * created through the API finishes with that file as its artifact.
 */
const source = process.env.BENCH_ARTIFACT_FILE;
if (!source) throw new Error('BENCH_ARTIFACT_FILE is not set');
await serveBenchApp({
  name: 'dl',
  env: { WORKER: 'on' },
  overrides: { generator: new FixedFileGenerator(source) },
  startWorker: true,
});
