/**
 * One full garbage collection once a process has loaded and built everything, before it takes traffic.
 *
 * Loading the code and compiling the routes' schemas leaves the heap at about 52 MB, of which about 43 MB
 * live, while V8 last sized its old generation at about 15 MB, early in the loading. The first old-space
 * collection under load then came as a non-incremental Mark-Compact ("allocation failure"), holding the
 * event loop 36 ms in the first seconds of traffic (docs/performance.md, "An eighth session"). Collected
 * here, the limits are sized from what stays live, and the collections under load are incremental.
 *
 * Needs `--expose-gc` (`npm start`, `npm run worker` and the bench's servers pass it); without it nothing
 * happens.
 */
export function collectStartupGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
