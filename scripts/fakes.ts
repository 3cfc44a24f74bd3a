/**
 * Starts every provider fake of `test/fakes/` on loopback ports for manual trials and prints a channel
 * file (CONTRACT §11) that points at them:
 *
 *   npm run fakes                              fakes from port 18000 on; the channel file on stdout
 *   npm run fakes -- --write channels.json     …and the channel file written there
 *   FAKES_PORT=19000 npm run fakes             another first port
 *   YOOKASSA_NOTIFY_URL=… npm run fakes        where the YooKassa fake's checkout sends notifications
 *
 * Then start the service with the keys the fakes accept, `TRIPO_API_KEY=tsk_test SUNO_API_KEY=suno-test-key
 * GENERATORS_FILE=channels.json FETCH_ALLOW_ADDRESSES=127.0.0.1` (outputs are fetched from the fakes on
 * loopback, which the address rules otherwise refuse). Stop with Ctrl-C. A provider's fake joins with one
 * entry in FAKES.
 */
import fs from 'node:fs';
import { startCogFake } from '../test/fakes/cog.ts';
import { ElevenLabsFake } from '../test/fakes/elevenlabs.ts';
import { startKlingFake } from '../test/fakes/kling.ts';
import { RecraftFake } from '../test/fakes/recraft.ts';
import { startSeedanceFake } from '../test/fakes/seedance.ts';
import { SunoFake } from '../test/fakes/suno.ts';
import { TripoFake } from '../test/fakes/tripo.ts';
import { YookassaFake } from '../test/fakes/yookassa.ts';

/** What the script needs of a started fake. */
interface StartedFake {
  /** The channel's `base_url`. */
  url: string;
  close(): Promise<void>;
}

/** The keys the fakes accept, by the variable the channel file names. */
const KEYS: Readonly<Record<string, string>> = {
  TRIPO_API_KEY: 'tsk_test',
  SUNO_API_KEY: 'suno-test-key',
  SEEDANCE_API_KEY: 'ark-test-key',
  KLING_ACCESS_KEY: 'kling-test-ak',
  KLING_SECRET_KEY: 'kling-test-sk',
  ELEVENLABS_API_KEY: 'elevenlabs-test-key',
  RECRAFT_API_KEY: 'recraft-test-key',
};

interface FakeEntry {
  /** Port offset from FAKES_PORT, fixed so the printed file stays the same from run to run. */
  offset: number;
  start(port: number): Promise<StartedFake>;
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
  {
    offset: 1,
    // Output links living long enough for a person to watch a task finish.
    start: async (port) => {
      const fake = await TripoFake.start({
        port,
        apiKeys: [KEYS.TRIPO_API_KEY as string],
        queuedMs: 1_000,
        runningMs: 4_000,
        outputTtlMs: 60_000,
      });
      return { url: fake.baseUrl, close: () => fake.close() };
    },
    channels: (baseUrl) => [
      {
        name: 'tripo-fake',
        provider: 'tripo',
        models: ['model-3d'],
        base_url: baseUrl,
        api_key_env: 'TRIPO_API_KEY',
        priority: 0,
        weight: 1,
        max_concurrency: 5,
        timeout: '10m',
      },
    ],
  },
  {
    offset: 2,
    start: (port) =>
      new SunoFake({ port, apiKey: KEYS.SUNO_API_KEY, stepMs: 1_500, urlTtlMs: 60_000 }).start(),
    channels: (baseUrl) => [
      {
        name: 'suno-fake',
        provider: 'suno',
        models: ['music'],
        base_url: baseUrl,
        api_key_env: 'SUNO_API_KEY',
        priority: 0,
        weight: 1,
        max_concurrency: 5,
        timeout: '10m',
      },
    ],
  },
  {
    offset: 4,
    // Not a generator: wallet top-ups (CONTRACT §14) with PAYMENTS=yookassa YOOKASSA_SHOP_ID=100500
    // YOOKASSA_SECRET_KEY=test_secret_key YOOKASSA_BASE_URL=<printed address> (it ends in /v3 already).
    // Its checkout page pays and notifies YOOKASSA_NOTIFY_URL (default: the service on its default address).
    start: async (port) => {
      const notifyUrl =
        process.env.YOOKASSA_NOTIFY_URL || 'http://127.0.0.1:8080/v1/payments/yookassa/notifications';
      const fake = await YookassaFake.start({ port, notifyUrl });
      process.stderr.write(
        `YooKassa fake: YOOKASSA_BASE_URL=${fake.baseUrl}, notifications to ${notifyUrl}\n`,
      );
      return { url: fake.baseUrl, close: () => fake.close() };
    },
    channels: () => [],
  },
  {
    offset: 6,
    // Links living long enough for a person to watch a task finish.
    start: (port) =>
      startSeedanceFake({
        port,
        apiKeys: [KEYS.SEEDANCE_API_KEY as string],
        queuedMs: 2_000,
        runningMs: 6_000,
        urlTtlMs: 60_000,
      }),
    channels: (baseUrl) => [
      {
        name: 'seedance-fake',
        provider: 'seedance',
        models: ['video', 'video-omni'],
        base_url: baseUrl,
        api_key_env: 'SEEDANCE_API_KEY',
        priority: 0,
        weight: 1,
        max_concurrency: 5,
        timeout: '10m',
      },
    ],
  },
  {
    offset: 7,
    start: (port) =>
      startKlingFake({
        port,
        keys: { [KEYS.KLING_ACCESS_KEY as string]: KEYS.KLING_SECRET_KEY as string },
        stepMs: 3_000,
        urlTtlMs: 60_000,
        extraModels: ['kling-v4', 'kling-v4-omni'],
      }),
    channels: (baseUrl) => [
      {
        name: 'kling-fake',
        provider: 'kling',
        models: ['video-elements'],
        base_url: baseUrl,
        access_key_env: 'KLING_ACCESS_KEY',
        secret_key_env: 'KLING_SECRET_KEY',
        upstream_models: { 'v4.0': 'kling-v4', 'v4.0-omni': 'kling-v4-omni' },
        priority: 0,
        weight: 1,
        max_concurrency: 5,
        timeout: '10m',
      },
    ],
  },
  {
    offset: 8,
    // Calls slow enough to watch a task run; styles train in half a minute.
    start: (port) =>
      new ElevenLabsFake({ apiKey: KEYS.ELEVENLABS_API_KEY as string, callMs: 2_000, trainMs: 30_000 }).start(
        port,
      ),
    channels: (baseUrl) => [
      {
        name: 'elevenlabs-fake',
        provider: 'elevenlabs',
        models: ['voice', 'music-styles'],
        base_url: baseUrl,
        api_key_env: 'ELEVENLABS_API_KEY',
        priority: 0,
        weight: 1,
        max_concurrency: 5,
        timeout: '10m',
      },
    ],
  },
  {
    offset: 9,
    // Output links living long enough for a person to watch a task finish.
    start: (port) =>
      new RecraftFake({ apiKey: KEYS.RECRAFT_API_KEY as string, callMs: 2_000, urlTtlMs: 60_000 }).start(
        port,
      ),
    channels: (baseUrl) => [
      {
        name: 'recraft-fake',
        provider: 'recraft',
        models: ['image'],
        base_url: baseUrl,
        api_key_env: 'RECRAFT_API_KEY',
        priority: 0,
        weight: 1,
        max_concurrency: 5,
        timeout: '10m',
      },
    ],
  },
];

async function main(): Promise<void> {
  const firstPort = Number(process.env.FAKES_PORT ?? 18_000);
  const writeAt = process.argv.indexOf('--write');
  const target = writeAt >= 0 ? process.argv[writeAt + 1] : undefined;
  const servers: StartedFake[] = [];
  const channels: Array<Record<string, unknown>> = [];
  for (const fake of FAKES) {
    const server = await fake.start(firstPort + fake.offset);
    servers.push(server);
    channels.push(...fake.channels(server.url));
  }
  const file = `${JSON.stringify({ channels }, null, 2)}\n`;
  const keys = Object.entries(KEYS)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  if (target) fs.writeFileSync(target, file);
  process.stdout.write(file);
  process.stderr.write(
    `${servers.length} fakes listening on 127.0.0.1; start the service with ${keys} GENERATORS_FILE=<this file> FETCH_ALLOW_ADDRESSES=127.0.0.1. Ctrl-C stops.\n`,
  );
  const stop = (): void => {
    void Promise.all(servers.map((server) => server.close())).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
