export { Sweeper } from './sweeper.ts';
export { cancelUpstreamRuns } from './upstream-cancels.ts';
export { DEFAULT_WORKER_CONCURRENCY, Worker, type WorkerOptions } from './worker.ts';
