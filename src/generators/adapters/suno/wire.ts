/**
 * sunoapi.org on the wire (PROVIDERS.md §2): every answer is an envelope `{ code, msg, data }` whose body
 * `code` decides, whatever the HTTP status says. This module makes the calls and turns envelopes into
 * data or into the error classes of the adapter contract.
 */
import { GenerationError, GeneratorTransientError } from '../../generator.ts';
import { type Channel, ChannelOutOfCredit, type UpstreamHttp, type UpstreamResponse } from '../types.ts';
import { retryAfterMs, transientFailure } from '../upstream-failure.ts';

/** Body codes that say "try again" (PROVIDERS.md "Normalised mapping": 401, 405, 430, 455, 500). */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([401, 405, 430, 455, 500]);
/** Body code of "insufficient credits": the channel's own account is empty. */
const NO_CREDIT_CODE = 429;

/** A JSON object, or null for anything else. */
export function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** A non-empty string field, or undefined. */
export function stringField(value: Record<string, unknown> | null, key: string): string | undefined {
  const field = value?.[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

/**
 * The envelope's `data` when its body code is 200; otherwise the error the code means. `what` names the
 * call in messages (no secrets, no URLs with tokens).
 */
export function envelopeData(response: UpstreamResponse, what: string): Record<string, unknown> | null {
  const envelope = asObject(response.body);
  const code = envelope?.['code'];
  if (typeof code !== 'number') {
    // No envelope at all: the HTTP status is all there is (a proxy's 502 page, an empty 500).
    throw (
      transientFailure(response, `suno ${what}`) ??
      new GeneratorTransientError(`suno ${what}: HTTP ${response.status} without a body code`)
    );
  }
  const msg = typeof envelope?.['msg'] === 'string' ? envelope['msg'] : '';
  if (code === 200) return asObject(envelope?.['data']);
  const reason = `suno ${what}: code ${code}${msg === '' ? '' : ` (${msg})`}`;
  if (code === NO_CREDIT_CODE) throw new ChannelOutOfCredit(reason);
  if (TRANSIENT_CODES.has(code)) {
    const wait = retryAfterMs(response.headers);
    throw new GeneratorTransientError(reason, wait === null ? {} : { retryAfterMs: wait });
  }
  // 400, 404, 413 and anything else: final. The create envelope's 400/413 are bad parameters, not a
  // content refusal (only a task's errorCode says content, PROVIDERS.md "content").
  throw new GenerationError('generation_failed', reason);
}

/** The Suno calls of one channel: Bearer auth from `api_key`, JSON both ways. */
export class SunoApi {
  readonly #http: UpstreamHttp;
  readonly #auth: Record<string, string>;

  constructor(channel: Channel, http: UpstreamHttp) {
    this.#http = http;
    this.#auth = { authorization: `Bearer ${channel.secrets['api_key'] ?? ''}` };
  }

  /** `POST path` with a JSON body; the envelope's `data`. */
  async post(path: string, json: unknown, signal: AbortSignal): Promise<Record<string, unknown> | null> {
    const response = await this.#http.request({ method: 'POST', path, headers: this.#auth, json, signal });
    return envelopeData(response, `POST ${path}`);
  }

  /** `GET path?taskId=…`; the envelope's `data`. */
  async read(path: string, taskId: string, signal: AbortSignal): Promise<Record<string, unknown> | null> {
    const response = await this.#http.request({
      method: 'GET',
      path: `${path}?taskId=${encodeURIComponent(taskId)}`,
      headers: this.#auth,
      signal,
    });
    return envelopeData(response, `GET ${path}`);
  }

  /** An async create: its `data.taskId`, which must be there. */
  async create(path: string, json: unknown, signal: AbortSignal): Promise<string> {
    const taskId = stringField(await this.post(path, json, signal), 'taskId');
    if (taskId === undefined) throw new GeneratorTransientError(`suno POST ${path}: no data.taskId`);
    return taskId;
  }
}
