import { NotFoundError } from './errors.ts';
import { type ModelKey, type TaskParams, Tasks } from './tasks.ts';
import { type ClientOptions, randomKey, Transport } from './transport.ts';
import type { HelperTypes, LibraryTypes, Me, ModelList, Price, Upload } from './types.gen.ts';
import { verify, type WebhookEndpoint, type WebhookEventType } from './webhooks.ts';

/** A model as GET /v1/models lists it. */
export type Model = ModelList['models'][number];
/** A library address, `model/segment`. */
export type LibraryKey = keyof LibraryTypes;
/** Types of the library at `model`/`segment`: known libraries typed, others as plain records. */
export type LibraryOf<M extends string, S extends string> = `${M}/${S}` extends LibraryKey
  ? LibraryTypes[`${M}/${S}`]
  : { list: Record<string, unknown>; record: Record<string, unknown>; create: Record<string, unknown> };

/** One library's records: `c.libraries('music', 'personas').list()`. */
export interface LibraryClient<L extends { list: unknown; record: unknown; create: unknown }> {
  /** The records, newest first, with the limits of the creation fields. */
  list(): Promise<L['list']>;
  get(id: string): Promise<L['record']>;
  /** Creates a record (201); an Idempotency-Key is sent as for tasks. */
  create(body: L['create'], options?: { idempotencyKey?: string }): Promise<L['record']>;
  delete(id: string): Promise<void>;
}

/**
 * How long the service may keep a library creation, a singing voice's step or a helper waiting for its
 * generator, in seconds: the reference asks clients for a timeout of at least five minutes there. The
 * service locks a creation's Idempotency-Key as long (and a minute more), so a repeat sent sooner could
 * only be refused as still in progress.
 */
const LIBRARY_WAIT_SECONDS = 5 * 60;

/** Options of `files.upload`. */
export interface UploadOptions {
  /** Name kept with the file. */
  filename: string;
  /** (Default: `application/octet-stream`; the service recognises the type by content) */
  contentType?: string;
  /**
   * Ends the upload with the signal's reason, as `fetch` does: an upload is not bounded by `timeoutMs` (its
   * answer comes only after the whole file is sent), so this is how a caller bounds it.
   */
  signal?: AbortSignal;
}

/**
 * The API client: `new Client({ apiKey, baseUrl })`. Every method returns the API's JSON typed from the
 * OpenAPI document, and every refusal rejects with an ApiError subclass.
 */
export class Client {
  readonly tasks: Tasks;
  readonly #t: Transport;

  constructor(options: ClientOptions) {
    this.#t = new Transport(options);
    this.tasks = new Tasks(this.#t);
  }

  /** POST /v1/price: what the task would hold, and the money available now; no charge. */
  price<M extends ModelKey>(params: Pick<TaskParams<M>, 'model' | 'settings'>): Promise<Price> {
    return this.#t.json<Price>({ method: 'POST', path: '/v1/price', json: params, idempotent: true });
  }

  /** GET /v1/me: the account, the key's rights and daily limit, the money available. */
  me(): Promise<Me> {
    return this.#t.json<Me>({ method: 'GET', path: '/v1/me' });
  }

  readonly models = {
    /** GET /v1/models: the models visible to the key, each with its modes' settings schemas. */
    list: async (): Promise<Model[]> =>
      (await this.#t.json<ModelList>({ method: 'GET', path: '/v1/models' })).models,
    /**
     * One model (GET /v1/models/{key}); NotFoundError `model_not_found` when the key cannot see it. A service
     * without that address (404 `not_found`) is answered from the list.
     */
    get: async (key: string): Promise<Model> => {
      try {
        return await this.#t.json<Model>({ method: 'GET', path: `/v1/models/${encodeURIComponent(key)}` });
      } catch (error) {
        if (!(error instanceof NotFoundError) || error.code !== 'not_found') throw error;
      }
      const found = (await this.models.list()).find((model) => model.key === key);
      if (found) return found;
      throw new NotFoundError({
        code: 'model_not_found',
        status: 404,
        message: `Unknown model ${key}`,
        requestId: null,
      });
    },
  };

  readonly files = {
    /** POST /v1/files: stores the bytes and answers a direct link for URL settings (until `expires_at`). */
    upload: (bytes: Uint8Array | Blob, options: UploadOptions): Promise<Upload> =>
      this.#t.json<Upload>({
        method: 'POST',
        path: '/v1/files',
        query: { filename: options.filename },
        body: bytes,
        headers: { 'content-type': options.contentType ?? 'application/octet-stream' },
        signal: options.signal,
      }),
    get: (id: string): Promise<Upload> =>
      this.#t.json<Upload>({ method: 'GET', path: `/v1/files/${encodeURIComponent(id)}` }),
    /** The direct link answers 404 from then on. */
    delete: (id: string): Promise<void> =>
      this.#t.json<void>({ method: 'DELETE', path: `/v1/files/${encodeURIComponent(id)}` }),
  };

  /** The records of the library at /v1/models/{model}/{segment}. */
  libraries<M extends string, S extends string>(model: M, segment: S): LibraryClient<LibraryOf<M, S>> {
    const base = `/v1/models/${encodeURIComponent(model)}/${encodeURIComponent(segment)}`;
    const t = this.#t;
    return {
      list: () => t.json({ method: 'GET', path: base }),
      get: (id) => t.json({ method: 'GET', path: `${base}/${encodeURIComponent(id)}` }),
      create: (body, options = {}) =>
        t.json({
          method: 'POST',
          path: base,
          json: body,
          headers: { 'idempotency-key': options.idempotencyKey ?? randomKey() },
          idempotent: true,
          waitSeconds: LIBRARY_WAIT_SECONDS,
        }),
      delete: async (id) => {
        await t.send({ method: 'DELETE', path: `${base}/${encodeURIComponent(id)}` });
      },
    };
  }

  /**
   * Steps of a singing voice (`music/voices`): send the phrase's recording, or ask for a new phrase. Each
   * waits for the generator (the recording's check, the new phrase) as a creation does.
   */
  readonly singingVoices = {
    verify: (
      id: string,
      body: { recording_url: string; name: string },
    ): Promise<LibraryTypes['music/voices']['record']> =>
      this.#t.json({
        method: 'POST',
        path: `/v1/models/music/voices/${encodeURIComponent(id)}/verify`,
        json: body,
        waitSeconds: LIBRARY_WAIT_SECONDS,
      }),
    retry: (id: string): Promise<LibraryTypes['music/voices']['record']> =>
      this.#t.json({
        method: 'POST',
        path: `/v1/models/music/voices/${encodeURIComponent(id)}/retry`,
        waitSeconds: LIBRARY_WAIT_SECONDS,
      }),
  };

  /** A free helper by address: `c.helper('music/lyrics', { prompt })`. */
  helper<K extends keyof HelperTypes>(
    key: K,
    body: HelperTypes[K]['request'],
  ): Promise<HelperTypes[K]['response']> {
    // A helper waits for its generator as a library creation does (up to five minutes).
    return this.#t.json({
      method: 'POST',
      path: `/v1/models/${key}`,
      json: body,
      waitSeconds: LIBRARY_WAIT_SECONDS,
    });
  }

  /** The free helpers (a shared hourly budget per account). */
  readonly helpers = {
    lyrics: (body: HelperTypes['music/lyrics']['request']) => this.helper('music/lyrics', body),
    styleBoost: (body: HelperTypes['music/style-boost']['request']) => this.helper('music/style-boost', body),
    enhance: (body: HelperTypes['image/enhance']['request']) => this.helper('image/enhance', body),
  };

  /** The account's webhook endpoints and signing secrets (CONTRACT §12), and `verify`. */
  readonly webhooks = {
    /** Under an Idempotency-Key (a random one unless given), so a retry answers the same endpoint and secret. */
    create: (
      body: { url: string; events: WebhookEventType[]; description?: string | null },
      options: { idempotencyKey?: string } = {},
    ): Promise<WebhookEndpoint> =>
      this.#t.json({
        method: 'POST',
        path: '/v1/webhooks',
        json: body,
        headers: { 'idempotency-key': options.idempotencyKey ?? randomKey() },
        idempotent: true,
      }),
    /** One endpoint, without its secret. */
    get: (id: string): Promise<WebhookEndpoint> =>
      this.#t.json({ method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}` }),
    list: async (): Promise<WebhookEndpoint[]> =>
      (await this.#t.json<{ webhooks: WebhookEndpoint[] }>({ method: 'GET', path: '/v1/webhooks' })).webhooks,
    delete: async (id: string): Promise<void> => {
      await this.#t.send({ method: 'DELETE', path: `/v1/webhooks/${encodeURIComponent(id)}` });
    },
    /** A new secret; the old one keeps signing beside it for 24 hours. */
    rotateSecret: async (id: string): Promise<string> =>
      (
        await this.#t.json<{ secret: string }>({
          method: 'POST',
          path: `/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`,
        })
      ).secret,
    /** The secret that signs the deliveries of tasks' own `webhook_url`. */
    defaultSecret: async (): Promise<string> =>
      (await this.#t.json<{ secret: string }>({ method: 'GET', path: '/v1/webhooks/default/secret' })).secret,
    verify,
  };
}
