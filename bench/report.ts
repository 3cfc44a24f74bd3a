import { holdIdlePolling } from './tools.ts';

/** A rate for the tables: whole, with thousands separators. */
export const formatRate = (value: number): string => Math.round(value).toLocaleString('en-US');

/** Milliseconds for the tables: two decimals below 10, one above. */
export const formatMs = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(1));

/**
 * Runs a bench's `main`, turning its result into the exit code and a crash into exit code 1, with idle
 * CPUs polling for its whole length (`holdIdlePolling`, said on the first line of the output).
 */
export function runBench(main: () => Promise<number>, log: (line: string) => void): void {
  const idle = holdIdlePolling(process.env);
  process.stdout.write(`${idle.description}\n`);
  main()
    .then(
      (code) => {
        process.exitCode = code;
      },
      (error: unknown) => {
        log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        process.exitCode = 1;
      },
    )
    .finally(() => idle.release());
}
