export { Sweeper } from './sweeper.ts';
export { Worker, type WorkerOptions } from './worker.ts';
