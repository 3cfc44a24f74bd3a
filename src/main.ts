import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { collectStartupGarbage } from './lib/index.ts';

/** Balance of the demo account made on first start (kopecks): 10,000 RUB. */
const DEMO_BALANCE_MINOR = 1_000_000;

/**
 * How long a shutdown lets requests under way finish (milliseconds). A download to a client that reads
 * slowly, or not at all, or a trickled upload, would otherwise hold the close for as long as it lasts
 * (hours, for 100 MB at a few KB/s), the worker running on meanwhile; past this it is cut off.
 */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * How often a shutdown closes the connections that became idle (milliseconds). Node closes those idle when
 * the server closes, but a keep-alive connection whose request is answered afterwards stays open (for the
 * keep-alive timeout), and would hold the close until the grace period cuts it.
 */
const SHUTDOWN_IDLE_CHECK_MS = 50;

async function main(): Promise<void> {
  const config = loadConfig();
  const container = await createContainer(config);
  const app = await buildApp(container);

  const demo = await container.services.admin.ensureDemoAccount(DEMO_BALANCE_MINOR);
  if (demo) {
    process.stdout.write(
      `\nDemo account ${demo.account.id} created with ${demo.account.available_minor / 100} RUB.\n` +
        `Its API key (shown once, keep it):\n\n  ${demo.key.key}\n\n`,
    );
  }

  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const cutOff = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    const idleCheck = setInterval(() => app.server.closeIdleConnections(), SHUTDOWN_IDLE_CHECK_MS);
    await app.close();
    clearTimeout(cutOff);
    clearInterval(idleCheck);
    await container.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.ready();
  collectStartupGarbage();
  const address = await app.listen({ port: config.port, host: config.host });
  // Only a process that got its port claims work: one that cannot listen (a second start on the same port
  // and data) exits at once, and jobs it had claimed would wait out their lease.
  if (config.embeddedWorker) {
    container.worker.start();
    container.webhookSender.start();
  }
  container.sweeper.start();
  container.topupSweep.start(config.payments.sweepIntervalMs);
  const base = config.publicBaseUrl;
  process.stdout.write(`Listening on ${address} (dashboard: ${base}/, docs: ${base}/docs)\n`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
