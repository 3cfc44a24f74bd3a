/**
 * A fake Recraft API (PROVIDERS.md §7) on loopback: synchronous generations answering short-lived links
 * (PNG for raster models, SVG for vector ones), styles made from uploaded pictures, and the prompt
 * enhancer. Tokens are checked (401 `request unauthorized`, plain text as Recraft answers); bodies are
 * checked as the provider does (models, style ids and their type, sizes, `n`); a prompt containing
 * `[recraft:moderation]` is refused by moderation; failures can be queued (429 storms, 5xx, 402).
 */
import { TINY_PNG } from './cog.ts';
import { FailureQueue, type FakeForm, readForm, sleep } from './elevenlabs-kit.ts';
import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './server.ts';

export interface RecraftFakeOptions {
  apiKey: string;
  /** How long each generation takes (milliseconds). (Default: 50) */
  callMs?: number;
  /** How long output links live (milliseconds). (Default: 60 000) */
  urlTtlMs?: number;
}

/** A tiny SVG picture (what vector models answer). */
export const TINY_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8" viewBox="0 0 8 8"><rect width="8" height="8" fill="#e63"/></svg>',
);

const RASTER_MODELS = new Set(['recraftv4', 'recraftv4_pro', 'recraftv4_1', 'recraftv4_styles']);
const VECTOR_MODELS = new Set([
  'recraftv4_vector',
  'recraftv4_pro_vector',
  'recraftv4_1_vector',
  'recraftv4_styles_vector',
]);
const STYLE_MODELS = new Set(['recraftv4_styles', 'recraftv4_styles_vector']);
const ASPECTS = new Set(['1:1', '4:3', '3:4', '3:2', '2:3', '16:9', '9:16']);

export interface RecraftCall {
  method: string;
  path: string;
  json: unknown;
  form: FakeForm | null;
  authorization: string | undefined;
}

export interface RecraftStyle {
  id: string;
  style: string;
  model: string;
  files: number;
}

const text = (status: number, body: string): FakeReply => ({
  status,
  body,
  headers: { 'content-type': 'text/plain' },
});

export class RecraftFake {
  readonly options: Required<RecraftFakeOptions>;
  readonly calls: RecraftCall[] = [];
  readonly styles = new Map<string, RecraftStyle>();
  readonly failures = new FailureQueue();
  /** Every output link handed out, in order. */
  readonly links: string[] = [];
  /** How many of the next generations answer links that have already expired. */
  expiringGenerations = 0;
  #server: FakeServer | null = null;
  #next = 0;

  constructor(options: RecraftFakeOptions) {
    this.options = { callMs: 50, urlTtlMs: 60_000, ...options };
  }

  get url(): string {
    if (!this.#server) throw new Error('the fake is not started');
    return this.#server.url;
  }

  callsTo(path: string): RecraftCall[] {
    return this.calls.filter((c) => c.path === path);
  }

  async start(port = 0): Promise<this> {
    this.#server = await startFakeServer((request) => this.#handle(request), port);
    return this;
  }

  async close(): Promise<void> {
    await this.#server?.close();
  }

  async #handle(request: FakeRequest): Promise<FakeReply | null> {
    const form = await readForm(request);
    const authorization = request.headers.authorization;
    this.calls.push({
      method: request.method,
      path: request.path,
      json: form ? null : request.body,
      form,
      authorization,
    });
    if (authorization !== `Bearer ${this.options.apiKey}`) return text(401, 'request unauthorized');
    const queued = this.failures.take(request.path);
    if (queued) return queued;
    const { method, path } = request;
    if (
      method === 'POST' &&
      ['/images/generations', '/images/generations/raster', '/images/generations/vector'].includes(path)
    )
      return this.#generate(request.body);
    if (method === 'POST' && path === '/styles') return this.#createStyle(form);
    const style = /^\/styles\/([^/]+)$/.exec(path)?.[1];
    if (method === 'DELETE' && style)
      return this.styles.delete(style) ? { status: 200, body: {} } : text(404, '404 page not found');
    if (method === 'POST' && path === '/prompts/enhance') {
      const prompt = (request.body as { prompt?: unknown } | null)?.prompt;
      if (typeof prompt !== 'string' || prompt.length === 0 || prompt.length > 2000)
        return {
          status: 400,
          body: { code: 'invalid_prompt', message: 'prompt must be 1 to 2000 characters' },
        };
      return {
        status: 200,
        body: { prompt: `${prompt}, detailed, soft natural light, balanced composition` },
      };
    }
    return text(404, '404 page not found');
  }

  async #generate(body: unknown): Promise<FakeReply> {
    const b = (body ?? {}) as Record<string, unknown>;
    const model = String(b.model);
    const vector = VECTOR_MODELS.has(model);
    if (!vector && !RASTER_MODELS.has(model))
      return { status: 400, body: { code: 'invalid_model', message: `unknown model ${model}` } };
    if (typeof b.prompt !== 'string' || b.prompt.length === 0 || b.prompt.length > 10_000)
      return {
        status: 400,
        body: { code: 'invalid_prompt', message: 'prompt must be 1 to 10000 characters' },
      };
    if (b.prompt.includes('[recraft:moderation]'))
      return {
        status: 400,
        body: { code: 'prompt_rejected', message: 'The prompt was rejected by the moderation policy' },
      };
    const n = Number(b.n ?? 1);
    if (!Number.isInteger(n) || n < 1 || n > 6)
      return { status: 400, body: { code: 'invalid_n', message: 'n must be 1 to 6' } };
    if (b.size !== undefined && !ASPECTS.has(String(b.size)))
      return { status: 400, body: { code: 'invalid_size', message: `unknown size ${String(b.size)}` } };
    if (STYLE_MODELS.has(model) && b.style_id === undefined)
      return { status: 400, body: { code: 'style_required', message: `${model} requires style_id` } };
    if (b.style_id !== undefined) {
      const style = this.styles.get(String(b.style_id));
      if (!style) return { status: 404, body: { code: 'not_found', message: 'style not found' } };
      if (style.model.endsWith('_vector') !== vector)
        return {
          status: 400,
          body: { code: 'style_type_mismatch', message: 'the style does not fit the model' },
        };
    }
    await sleep(this.options.callMs);
    const expired = this.expiringGenerations > 0;
    if (expired) this.expiringGenerations -= 1;
    const ttl = expired ? -1 : this.options.urlTtlMs;
    const data = Array.from({ length: n }, () => {
      const url = vector
        ? this.#server!.serveFile(TINY_SVG, 'image/svg+xml', ttl)
        : this.#server!.serveFile(TINY_PNG, 'image/png', ttl);
      this.links.push(url);
      return { image_id: `img${++this.#next}`, url, revised_prompt: b.prompt };
    });
    return { status: 200, body: { created: Math.floor(Date.now() / 1000), credits: 40 * n, data } };
  }

  #createStyle(form: FakeForm | null): FakeReply {
    const style = form?.fields.style?.[0] ?? '';
    const model = form?.fields.model?.[0] ?? '';
    const files = form?.files.filter((f) => /^file\d+$/.test(f.field)) ?? [];
    if (!['any', 'vector_illustration'].includes(style) || !STYLE_MODELS.has(model))
      return {
        status: 400,
        body: { code: 'invalid_style', message: `unknown style ${style} or model ${model}` },
      };
    if (files.length < 1 || files.length > 10)
      return { status: 400, body: { code: 'invalid_files', message: 'send 1 to 10 files' } };
    if (files.reduce((sum, f) => sum + f.size, 0) > 10 * 1024 * 1024)
      return { status: 400, body: { code: 'files_too_large', message: 'files over 10 MB together' } };
    const id = `style-${++this.#next}`;
    this.styles.set(id, { id, style, model, files: files.length });
    return { status: 200, body: { id, credits: 40 } };
  }
}
