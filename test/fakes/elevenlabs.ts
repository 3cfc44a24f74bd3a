/**
 * A fake ElevenLabs API (PROVIDERS.md §6) on loopback: instant voice cloning, text-to-dialogue,
 * speech-to-speech, music finetunes that train through `pending` → `in_progress` → `completed` (or
 * `failed`) on a timer, and compose. Every call is synchronous and answers MP3 bytes after `callMs`. Keys
 * are checked (`invalid_api_key`); bodies are checked as the provider does (unknown voices, more than ten
 * voices in a dialogue, lengths) and failures can be queued (refusals, 429 storms, 5xx).
 */
import { FailureQueue, type FakeForm, fakeMp3, readForm, sleep } from './elevenlabs-kit.ts';
import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './server.ts';

export interface ElevenLabsFakeOptions {
  apiKey: string;
  port?: number;
  /** How long each synchronous call takes (milliseconds). (Default: 50) */
  callMs?: number;
  /** How long a finetune trains (milliseconds). (Default: 300) */
  trainMs?: number;
}

export interface Finetune {
  id: string;
  name: string;
  primary_genre: string;
  visibility: string;
  model_id: string;
  created_at: number;
  files: number;
  /** What training ends in. */
  outcome: 'completed' | 'failed' | 'blocked';
}

/** One call as the fake read it: JSON or multipart. */
export interface ElevenLabsCall {
  method: string;
  path: string;
  query: URLSearchParams;
  json: unknown;
  form: FakeForm | null;
  apiKey: string | undefined;
}

const detail = (status: number, code: string, message: string): FakeReply => ({
  status,
  body: { detail: { status: code, message } },
});

export class ElevenLabsFake {
  readonly options: Required<Omit<ElevenLabsFakeOptions, 'port'>>;
  readonly calls: ElevenLabsCall[] = [];
  readonly voices = new Map<string, { name: string; files: number }>();
  readonly finetunes = new Map<string, Finetune>();
  readonly failures = new FailureQueue();
  /** What the next finetunes' training ends in. */
  trainingOutcome: Finetune['outcome'] = 'completed';
  #server: FakeServer | null = null;
  #audio: Buffer = Buffer.alloc(0);
  #next = 0;

  constructor(options: ElevenLabsFakeOptions) {
    this.options = { callMs: 50, trainMs: 300, ...options };
  }

  get url(): string {
    if (!this.#server) throw new Error('the fake is not started');
    return this.#server.url;
  }

  /** Calls to a path (query excluded), in order. */
  callsTo(path: string | RegExp): ElevenLabsCall[] {
    return this.calls.filter((c) => (typeof path === 'string' ? c.path === path : path.test(c.path)));
  }

  async start(port = 0): Promise<this> {
    this.#audio = await fakeMp3(2, 'elevenlabs-fake');
    this.#server = await startFakeServer((request) => this.#handle(request), port);
    return this;
  }

  async close(): Promise<void> {
    await this.#server?.close();
  }

  async #handle(request: FakeRequest): Promise<FakeReply | null> {
    const form = await readForm(request);
    const apiKey = request.headers['xi-api-key'] as string | undefined;
    this.calls.push({
      method: request.method,
      path: request.path,
      query: request.query,
      json: form ? null : request.body,
      form,
      apiKey,
    });
    if (apiKey !== this.options.apiKey) return detail(401, 'invalid_api_key', 'Invalid API key');
    const queued = this.failures.take(request.path);
    if (queued) return queued;
    const { method, path } = request;
    if (method === 'POST' && path === '/v1/voices/add') return this.#addVoice(form);
    const voice = /^\/v1\/voices\/([^/]+)$/.exec(path)?.[1];
    if (method === 'DELETE' && voice) {
      if (!this.voices.delete(voice)) return detail(404, 'voice_not_found', 'Voice not found');
      return { status: 200, body: { status: 'ok' } };
    }
    if (method === 'POST' && path === '/v1/text-to-dialogue') return this.#dialogue(request);
    const sts = /^\/v1\/speech-to-speech\/([^/]+)$/.exec(path)?.[1];
    if (method === 'POST' && sts) return this.#speechToSpeech(request, sts, form);
    if (method === 'POST' && path === '/v1/music/finetunes') return this.#createFinetune(form);
    const finetune = /^\/v1\/music\/finetunes\/([^/]+)$/.exec(path)?.[1];
    if (method === 'DELETE' && finetune) {
      if (!this.finetunes.delete(finetune)) return detail(404, 'not_found', 'Finetune not found');
      return { status: 200, body: { status: 'ok' } };
    }
    if (method === 'GET' && finetune) {
      const found = this.finetunes.get(finetune);
      return found
        ? { status: 200, body: this.#view(found) }
        : detail(404, 'not_found', 'Finetune not found');
    }
    if (method === 'POST' && path === '/v1/music') return this.#compose(request);
    return null;
  }

  #audioReply(): FakeReply {
    return { status: 200, body: this.#audio, headers: { 'content-type': 'audio/mpeg' } };
  }

  #addVoice(form: FakeForm | null): FakeReply {
    const name = form?.fields.name?.[0];
    const files = form?.files.filter((f) => f.field === 'files') ?? [];
    if (!name || files.length === 0)
      return {
        status: 422,
        body: {
          detail: [{ loc: ['body', name ? 'files' : 'name'], msg: 'Field required', type: 'missing' }],
        },
      };
    const id = `voice${++this.#next}`;
    this.voices.set(id, { name, files: files.length });
    return { status: 200, body: { voice_id: id, requires_verification: false } };
  }

  async #dialogue(request: FakeRequest): Promise<FakeReply> {
    if (request.query.get('output_format') !== 'mp3_44100_128')
      return detail(400, 'invalid_output_format', 'Unsupported output format');
    const body = request.body as {
      inputs?: Array<{ text?: unknown; voice_id?: unknown }>;
      model_id?: unknown;
    };
    const inputs = Array.isArray(body?.inputs) ? body.inputs : [];
    if (inputs.length === 0)
      return {
        status: 422,
        body: { detail: [{ loc: ['body', 'inputs'], msg: 'Field required', type: 'missing' }] },
      };
    const voices = new Set(inputs.map((i) => String(i.voice_id)));
    if (voices.size > 10) return detail(400, 'too_many_voices', 'A dialogue takes at most 10 unique voices');
    for (const id of voices)
      if (!this.voices.has(id)) return detail(400, 'voice_not_found', `Voice ${id} not found`);
    if (inputs.some((i) => String(i.text).includes('[elevenlabs:copyright]')))
      return detail(400, 'copyright_violation', 'The text reproduces copyrighted material');
    await sleep(this.options.callMs);
    return this.#audioReply();
  }

  async #speechToSpeech(request: FakeRequest, voice: string, form: FakeForm | null): Promise<FakeReply> {
    if (request.query.get('output_format') !== 'mp3_44100_128')
      return detail(400, 'invalid_output_format', 'Unsupported output format');
    if (!this.voices.has(voice)) return detail(400, 'voice_not_found', `Voice ${voice} not found`);
    if (!form?.files.some((f) => f.field === 'audio'))
      return {
        status: 422,
        body: { detail: [{ loc: ['body', 'audio'], msg: 'Field required', type: 'missing' }] },
      };
    await sleep(this.options.callMs);
    return this.#audioReply();
  }

  #createFinetune(form: FakeForm | null): FakeReply {
    const name = form?.fields.name?.[0] ?? '';
    const genre = form?.fields.primary_genre?.[0];
    const files = form?.files.filter((f) => f.field === 'files') ?? [];
    if (name.length < 5 || name.length > 200 || !genre || files.length === 0 || files.length > 50)
      return {
        status: 422,
        body: { detail: [{ loc: ['body'], msg: 'Invalid finetune', type: 'value_error' }] },
      };
    const id = `ft${++this.#next}`;
    const finetune: Finetune = {
      id,
      name,
      primary_genre: genre,
      visibility: form?.fields.visibility?.[0] ?? 'private',
      model_id: form?.fields.model_id?.[0] ?? 'music_v1',
      created_at: Date.now(),
      files: files.length,
      outcome: this.trainingOutcome,
    };
    this.finetunes.set(id, finetune);
    return { status: 201, body: this.#view(finetune) };
  }

  /** A finetune as the API shows it, its state from the time it has trained. */
  #view(f: Finetune): Record<string, unknown> {
    const age = Date.now() - f.created_at;
    const trained = age >= this.options.trainMs;
    const status = trained ? f.outcome : age >= this.options.trainMs / 2 ? 'in_progress' : 'pending';
    return {
      id: f.id,
      name: f.name,
      tags: [],
      primary_genre: f.primary_genre,
      model_id: f.model_id,
      created_at: new Date(f.created_at).toISOString(),
      visibility: f.visibility,
      created_by: 'fake-user',
      status,
      training_progress: trained ? 1 : Math.min(0.99, age / this.options.trainMs),
      ...(status === 'failed' ? { failure_reason: 'training_failed' } : {}),
      ...(status === 'blocked' ? { failure_reason: 'copyright_violation' } : {}),
    };
  }

  async #compose(request: FakeRequest): Promise<FakeReply> {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const length = Number(body.music_length_ms);
    if (typeof body.prompt !== 'string' || !(length >= 3000 && length <= 600_000))
      return {
        status: 422,
        body: { detail: [{ loc: ['body', 'music_length_ms'], msg: 'Out of range', type: 'value_error' }] },
      };
    if (body.prompt.includes('[elevenlabs:copyright]'))
      return detail(400, 'copyright_violation', 'The prompt names copyrighted material');
    if (body.finetune_id !== undefined) {
      const finetune = this.finetunes.get(String(body.finetune_id));
      if (!finetune || this.#view(finetune).status !== 'completed')
        return detail(400, 'finetune_not_ready', 'The finetune is not trained');
    }
    await sleep(this.options.callMs);
    return this.#audioReply();
  }
}
