/** Runs a bench's `main`, turning its result into the exit code and a crash into exit code 1. */
export function runBench(main: () => Promise<number>, log: (line: string) => void): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exitCode = 1;
    },
  );
}
