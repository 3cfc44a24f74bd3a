/**
 * The load of a soak run: accounts with money, a picture and a cloned voice each, then tasks over every
 * model with random outcomes (the simulator's markers) and random cancels.
 */

import { readFile } from 'node:fs/promises';
import { PNG } from 'pngjs';
import { MODELS as CATALOG } from '../../src/catalog/index.ts';
import type { Rng } from '../../src/generators/simulator/media/seed.ts';
import { makeWav } from '../../src/media/fixtures.ts';
import { type Answer, type Client, errorCode } from './client.ts';
import { ADMIN_TOKEN, sleep } from './cluster.ts';

/** What a task is meant to end as: its marker, or a cancel sent after it was accepted. */
export type Intent = 'succeed' | 'fail' | 'refuse' | 'slow' | 'cancel';
export const INTENTS: readonly Intent[] = ['succeed', 'fail', 'refuse', 'slow', 'cancel'];
const WEIGHTS: Record<Intent, number> = { succeed: 0.4, fail: 0.15, refuse: 0.15, slow: 0.1, cancel: 0.2 };
const MARKERS: Record<Intent, string> = {
  succeed: '',
  fail: ' [sim:fail]',
  refuse: ' [sim:refuse]',
  slow: ' [sim:slow]',
  cancel: '',
};

export interface SoakAccount {
  id: string;
  key: string;
  /** Direct link of an uploaded PNG, for the video model's frames. */
  pictureUrl: string;
  /** A cloned voice of the voice model. */
  voiceId: string;
  credited: number;
}

export interface Created {
  taskId: string;
  accountId: string;
  model: string;
  intent: Intent;
}

export interface TrafficFigures {
  created: number;
  /** Creations answered as replays (the first answer was lost to a kill). */
  replays: number;
  /** Creations given up after repeated 409 request_in_progress (the first attempt died mid-way). */
  abandoned: number;
  /** 429 too_many_active and other refusals of a creation, by code. */
  refusals: Record<string, number>;
  cancels: { canceled: number; tooLate: number };
  /** Cancels answered 200 whose task was not canceled, or answered with an unexpected refusal. */
  cancelProblems: string[];
}

const CREDIT_MINOR = 100_000_000;

type SettingsOf = (account: SoakAccount, text: string) => Record<string, unknown>;

/** Settings per model; `text` gets the marker. Text inputs only, apart from the account's own files. */
const SETTINGS: Record<string, SettingsOf> = {
  'model-3d': (_, text) => ({ task_type: 'text_to_model', prompt: text }),
  video: (account, text) => ({
    mode: 'frames',
    prompt: text,
    image_urls: [account.pictureUrl],
    quality: '480p',
    duration: '2s',
  }),
  music: (_, text) => ({ mode: 'sounds', soundDescription: text }),
  'video-elements': (_, text) => ({ prompt: text, length: 3 }),
  voice: (account, text) => ({ mode: 'text_to_dialogue', text, voice: account.voiceId }),
  image: (_, text) => ({ prompt: text }),
  'music-styles': (_, text) => ({ prompt: text, duration: 10 }),
  'video-omni': (_, text) => ({ prompt: text, duration: 3 }),
};

/** Every model of the catalog: a model added there without soak settings stops the soak at once. */
export const MODELS: readonly string[] = CATALOG.map((m) => m.key);
const unsoaked = MODELS.filter((key) => !(key in SETTINGS));
if (unsoaked.length > 0) throw new Error(`no soak settings for ${unsoaked.join(', ')}`);

function settingsOf(model: string, account: SoakAccount, text: string): Record<string, unknown> {
  return (SETTINGS[model] as SettingsOf)(account, text);
}

async function mustBe(answer: Answer, status: number, what: string): Promise<Record<string, unknown>> {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${answer.body.toString()}`);
  return answer.json();
}

/** Makes the accounts through the operator API and the public API, before any chaos. */
export async function makeAccounts(client: Client, count: number, dir: string): Promise<SoakAccount[]> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const picture = new PNG({ width: 64, height: 64 });
  picture.data.fill(180);
  const png = PNG.sync.write(picture);
  const wav = await readFile(await makeWav(dir, 2));
  const made: SoakAccount[] = [];
  for (let i = 0; i < count; i++) {
    const body = { name: `soak ${i}` };
    const account = await mustBe(
      await client.call('POST', '/admin/v1/accounts', { headers: admin, body }),
      201,
      'account',
    );
    const id = String(account.id);
    const credit = { amount_minor: CREDIT_MINOR, reference: 'soak' };
    await mustBe(
      await client.call('POST', `/admin/v1/accounts/${id}/credits`, { headers: admin, body: credit }),
      201,
      'credit',
    );
    const key = await mustBe(
      await client.call('POST', `/admin/v1/accounts/${id}/keys`, { headers: admin, body: {} }),
      201,
      'key',
    );
    const auth = { authorization: `Bearer ${String(key.key)}` };
    const upload = (name: string, type: string, bytes: Buffer) =>
      client.call('POST', `/v1/files?filename=${name}`, {
        headers: { ...auth, 'content-type': type },
        body: bytes,
      });
    const pictureUrl = String((await mustBe(await upload('frame.png', 'image/png', png), 201, 'png')).url);
    const sample = String((await mustBe(await upload('sample.wav', 'audio/wav', wav), 201, 'wav')).url);
    const voice = await mustBe(
      await client.call('POST', '/v1/models/voice/voices', {
        headers: auth,
        body: { name: `Voice ${i}`, sample_urls: [sample] },
      }),
      201,
      'voice',
    );
    made.push({ id, key: String(key.key), pictureUrl, voiceId: String(voice.id), credited: CREDIT_MINOR });
  }
  return made;
}

function pickIntent(rng: Rng): Intent {
  let roll = rng.next();
  for (const intent of INTENTS) {
    roll -= WEIGHTS[intent];
    if (roll < 0) return intent;
  }
  return 'succeed';
}

/**
 * Creates tasks from `concurrency` loops until `total` were accepted. Each creation
 * carries an Idempotency-Key, so a request cut by a kill is sent again without a second task.
 */
export async function runTraffic(options: {
  client: Client;
  rng: Rng;
  accounts: SoakAccount[];
  total: number;
  concurrency: number;
  /** Creations are spread evenly over this time (milliseconds); 0 sends them as fast as they go. */
  spreadMs: number;
}): Promise<{ created: Created[]; figures: TrafficFigures }> {
  const { client, rng, accounts } = options;
  const created: Created[] = [];
  const figures: TrafficFigures = {
    created: 0,
    replays: 0,
    abandoned: 0,
    refusals: {},
    cancels: { canceled: 0, tooLate: 0 },
    cancelProblems: [],
  };
  const cancels: Promise<void>[] = [];
  // `reserved` counts creations accepted or under way, so the loops stop at `total`; `sequence` numbers
  // every request for its own Idempotency-Key, also the ones refused and sent again later.
  let reserved = 0;
  let sequence = 0;
  const startedAt = Date.now();
  const loop = async (): Promise<void> => {
    while (reserved < options.total) {
      const due = startedAt + (reserved * options.spreadMs) / options.total;
      reserved++;
      await sleep(due - Date.now());
      const n = sequence++;
      const account = rng.pick(accounts);
      const model = MODELS[n % MODELS.length]!;
      const intent = pickIntent(rng);
      const auth = { authorization: `Bearer ${account.key}` };
      const body = { model, settings: settingsOf(model, account, `soak ${n}${MARKERS[intent]}`) };
      const headers = { ...auth, 'idempotency-key': `soak-${n}` };
      // A kill between the idempotency record and the task leaves the key blocked for a minute; three
      // waits, then the creation is counted as abandoned (the final checks read every task anyway).
      const answer = await client.call('POST', '/v1/tasks', { headers, body, inProgressTries: 3 });
      if (answer.status !== 202) {
        reserved--;
        const code = errorCode(answer) || String(answer.status);
        if (code === 'request_in_progress') figures.abandoned++;
        else figures.refusals[code] = (figures.refusals[code] ?? 0) + 1;
        // too_many_active: that account's model is full for now; anything else ends the run's load.
        if (code !== 'too_many_active' && code !== 'request_in_progress') return;
        await sleep(500);
        continue;
      }
      if (answer.headers.get('idempotent-replayed') === 'true') figures.replays++;
      const taskId = answer.json<{ id: string }>().id;
      created.push({ taskId, accountId: account.id, model, intent });
      figures.created++;
      if (intent === 'cancel')
        cancels.push(
          cancelLater(client, rng, auth, taskId, figures).catch((error: unknown) => {
            figures.cancelProblems.push(`${taskId}: ${String(error)}`);
          }),
        );
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  await Promise.all(cancels);
  return { created, figures };
}

/** Cancels a task after a random 0–3 s: while queued, while running or (too late) when final. */
async function cancelLater(
  client: Client,
  rng: Rng,
  auth: Record<string, string>,
  taskId: string,
  figures: TrafficFigures,
): Promise<void> {
  await sleep(rng.range(0, 3_000));
  const answer = await client.call('POST', `/v1/tasks/${taskId}/cancel`, { headers: auth });
  // CONTRACT §3: 200 only when the cancel took effect; a task that ended first is 409.
  if (answer.status === 200 && answer.json<{ status?: string }>().status !== 'canceled')
    figures.cancelProblems.push(`${taskId}: 200 with ${answer.body.toString().slice(0, 200)}`);
  if (answer.status === 200) figures.cancels.canceled++;
  else if (errorCode(answer) === 'task_not_cancelable') figures.cancels.tooLate++;
  else if (answer.status < 500)
    throw new Error(`cancel ${taskId}: ${answer.status} ${answer.body.toString()}`);
}
