/**
 * Starts every provider fake of `test/fakes/` on loopback ports for manual trials and prints a channel
 * file (CONTRACT §11) that points at them:
 *
 *   npm run fakes                              fakes from port 18000 on; the channel file on stdout
 *   npm run fakes -- --write channels.json     …and the channel file written there
 *   FAKES_PORT=19000 npm run fakes             another first port
 *
 * Then start the service with `GENERATORS_FILE=channels.json FETCH_ALLOW_ADDRESSES=127.0.0.1` (outputs
 * are fetched from the fakes on loopback, which the address rules otherwise refuse). Stop with Ctrl-C.
 * A provider's fake joins with one entry in FAKES.
 */
import fs from 'node:fs';
import { startCogFake } from '../test/fakes/cog.ts';
import type { FakeServer } from '../test/fakes/server.ts';

interface FakeEntry {
  /** Port offset from FAKES_PORT, fixed so the printed file stays the same from run to run. */
  offset: number;
  start(port: number): Promise<FakeServer>;
  /** The channel file entries that use this fake (`base_url` is the fake's). */
  channels(baseUrl: string): Array<Record<string, unknown>>;
}

/** One entry per provider fake. */
const FAKES: readonly FakeEntry[] = [
  {
    offset: 3,
    // Links rather than data URLs, living long enough for a person to watch a task finish.
    start: (port) => startCogFake({ port, outputAs: 'url', urlTtlMs: 60_000, runMs: 3_000, slots: 2 }),
    channels: (baseUrl) => [
      {
        name: 'cog-fake',
        provider: 'cog',
        models: ['image'],
        base_url: baseUrl,
        priority: 0,
        weight: 1,
        max_concurrency: 2,
        timeout: '10m',
      },
    ],
  },
];

async function main(): Promise<void> {
  const firstPort = Number(process.env.FAKES_PORT ?? 18_000);
  const writeAt = process.argv.indexOf('--write');
  const target = writeAt >= 0 ? process.argv[writeAt + 1] : undefined;
  const servers: FakeServer[] = [];
  const channels: Array<Record<string, unknown>> = [];
  for (const fake of FAKES) {
    const server = await fake.start(firstPort + fake.offset);
    servers.push(server);
    channels.push(...fake.channels(server.url));
  }
  const file = `${JSON.stringify({ channels }, null, 2)}\n`;
  if (target) fs.writeFileSync(target, file);
  process.stdout.write(file);
  process.stderr.write(
    `${servers.length} fake(s) listening on 127.0.0.1; start the service with GENERATORS_FILE=<this file> FETCH_ALLOW_ADDRESSES=127.0.0.1. Ctrl-C stops.\n`,
  );
  const stop = (): void => {
    void Promise.all(servers.map((server) => server.close())).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
