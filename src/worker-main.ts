import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { collectStartupGarbage } from './lib/index.ts';
import { startMetricsServer } from './observability/index.ts';

/** `npm run worker`: runs tasks and sweeps expired files without the HTTP API. */
async function main(): Promise<void> {
  const config = loadConfig();
  const container = await createContainer(config);
  // This process's run counters exist nowhere else (CONTRACT §15): it serves them on a port of its own.
  const metricsServer =
    config.metricsToken !== null && config.metricsPort !== null
      ? await startMetricsServer({
          metrics: container.metrics,
          token: config.metricsToken,
          host: config.host,
          port: config.metricsPort,
          wrongTokenLimit: config.rateLimits.wrongKey,
        })
      : null;
  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    container.log.info({ signal }, 'worker stopping');
    await metricsServer?.close();
    await container.close();
    process.exit(0);
  };
  // Before anything says the worker started: a supervisor that stops it as soon as it reads that line
  // must find the handlers in place, not Node's default, which ends the process without closing it.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  collectStartupGarbage();
  container.worker.start();
  container.webhookSender.start();
  container.sweeper.start();
  container.topupSweep.start(config.payments.sweepIntervalMs);
  container.log.info({ worker: container.worker.id }, 'worker started');
}

main().catch((error: unknown) => {
  process.stderr.write(
    error instanceof ConfigError
      ? `Configuration error: ${error.message}\n`
      : `Failed to start: ${String(error)}\n`,
  );
  process.exit(1);
});
