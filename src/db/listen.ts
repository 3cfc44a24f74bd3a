import pg from 'pg';

/** First wait before reconnecting a lost LISTEN connection (milliseconds); it doubles up to the maximum. */
const RECONNECT_FIRST_MS = 250;
/** Longest wait between reconnection attempts (milliseconds). */
const RECONNECT_MAX_MS = 5_000;

/** How a lost LISTEN connection is retried: jittered exponential backoff, never giving up. */
export function reconnectDelayMs(failures: number): number {
  const base = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** failures);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * A dedicated connection that LISTENs on `channel`. When the server goes away the connection is made
 * again, with backoff, for as long as it takes (issue 10.10: a single failed retry used to end
 * listening for good, leaving workers on their periodic poll). `onNotify` gets each notification's
 * payload; after each reconnection it is called once with null, because notifications sent while the
 * connection was down are lost.
 */
export async function listenPostgres(options: {
  databaseUrl: string;
  channel: string;
  onNotify: (payload: string | null) => void;
  /** Longest a connection attempt may take (milliseconds). */
  connectTimeoutMs: number;
}): Promise<() => Promise<void>> {
  const { databaseUrl, channel, onNotify, connectTimeoutMs } = options;
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  let client: pg.Client | null = null;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;

  const open = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let lost = false;
    const onLost = (): void => {
      if (lost) return;
      lost = true;
      if (client === next) client = null;
      next.end().catch(() => {});
      schedule();
    };
    next.on('notification', (message) => onNotify(message.payload ?? ''));
    next.on('error', onLost);
    next.on('end', onLost);
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      lost = true;
      next.end().catch(() => {});
      throw error;
    }
    if (stopped) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
  };

  const schedule = (): void => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      open().then(
        () => {
          failures = 0;
          // Whatever was notified while the connection was down is looked for now.
          if (!stopped) onNotify(null);
        },
        () => {
          failures += 1;
          schedule();
        },
      );
    }, reconnectDelayMs(failures));
    timer.unref();
  };

  await open();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await client?.end().catch(() => {});
  };
}
