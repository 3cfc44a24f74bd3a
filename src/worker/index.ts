export { Sweeper } from './sweeper.ts';
export { cancelUpstreamRuns } from './upstream-cancels.ts';
export { Worker, type WorkerOptions } from './worker.ts';
