/**
 * The ElevenLabs adapter against its fake, for the adapter's tests: a channel on the fake, our uploads
 * served from memory, and two voices cloned at the fake as the service's records show them to a task.
 */
import { ElevenLabsAdapter } from '../../src/generators/adapters/elevenlabs/index.ts';
import type { Channel } from '../../src/generators/adapters/types.ts';
import { pollingTestDeps, testChannel } from './adapter-deps.ts';
import { ElevenLabsFake } from './elevenlabs.ts';
import { fakeMp3 } from './elevenlabs-kit.ts';

export const KEY = 'el-test-key';
export const SAMPLE = 'http://127.0.0.1:8080/files/AbCdEfGhIjKlMnOpQrStUvWxYz012345/sample.mp3';
export const SAMPLE2 = 'http://127.0.0.1:8080/files/ZyXwVuTsRqPoNmLkJiHgFeDcBa543210/second.mp3';

export interface ElevenLabsRig {
  fake: ElevenLabsFake;
  adapter: ElevenLabsAdapter;
  inputs: Map<string, Uint8Array>;
  /** `rec-a` and `rec-b`, cloned at the fake. */
  records: Record<string, Record<string, unknown>>;
  /** Another adapter of a channel on the fake (another key, other channel settings). */
  build(apiKey?: string, channel?: Partial<Channel>): ElevenLabsAdapter;
  close(): Promise<void>;
}

export async function elevenLabsRig(): Promise<ElevenLabsRig> {
  const fake = await new ElevenLabsFake({ apiKey: KEY, callMs: 20, trainMs: 200 }).start();
  const mp3 = await fakeMp3(3, 'sample');
  const inputs = new Map<string, Uint8Array>([
    [SAMPLE, mp3],
    [SAMPLE2, mp3],
  ]);
  const build = (apiKey = KEY, channel: Partial<Channel> = {}): ElevenLabsAdapter =>
    new ElevenLabsAdapter(
      pollingTestDeps(
        { ...testChannel('elevenlabs', fake.url, apiKey, ['voice', 'music-styles']), ...channel },
        { inputs },
      ),
    );
  const adapter = build();
  const records: Record<string, Record<string, unknown>> = {};
  for (const id of ['rec-a', 'rec-b']) {
    const created = await adapter.library.createRecord(
      {
        model: 'voice',
        library: 'voices',
        recordId: id,
        fields: { name: `Voice ${id}`, sample_urls: [SAMPLE] },
      },
      AbortSignal.timeout(10_000),
    );
    records[id] = { id, status: 'ready', upstream_id: created.upstreamId };
  }
  return { fake, adapter, inputs, records, build, close: () => fake.close() };
}
