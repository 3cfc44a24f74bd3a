/**
 * The Node options of the project's worker threads (piscina pools): `require()` of ES modules turned off.
 * piscina loads a thread's entry with `require()` first and falls back to `import()`; our entries are ES
 * modules, and Node 24 aborted a whole test process (`Assertion failed: facade->InstantiateModule(...)` in
 * `CreateRequiredModuleFacade`) while a thread loaded one that way. With the option off, `require()`
 * refuses at once (ERR_REQUIRE_ESM) and the entry is imported, the path an ES module takes everywhere else.
 * The process's own options are not repeated: V8's are the process's anyway, and a thread refuses the
 * per-process ones (`node --test` passes some).
 */
export function threadExecArgv(): string[] {
  return ['--no-experimental-require-module'];
}
