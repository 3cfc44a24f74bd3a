/**
 * Any model behind a Cog HTTP server (PROVIDERS.md §3, provider `cog`): the task's settings are the
 * prediction's `input`, its files come from `output`. Cog has no read of a prediction, so a run is
 * driven by its webhooks: `PUT /predictions/{id}` with `Prefer: respond-async` and our callback URL, and
 * the `completed` webhook body (authenticated by the run's callback token) is the result.
 *
 * Crash safety: the prediction id is derived from the run key, and a PUT with the id of a running
 * prediction answers that prediction (Cog's own idempotency), so a worker that resumes a run whose handle
 * was never saved repeats the PUT harmlessly, and so does a retry after a PUT that timed out
 * (`isCreateIdempotent`). The PUT is never repeated once the run has a handle. The
 * remaining window: a prediction that finished while its `completed` webhook could not be stored (the
 * service unreachable through Cog's retries) and whose handle was never saved is run a second time.
 */
import type { GenerationPlan } from '../../../catalog/index.ts';
import {
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  GeneratorTransientError,
  type RunStart,
} from '../../generator.ts';
import { filesForPlan } from '../output-files.ts';
import {
  type Adapter,
  type AdapterDeps,
  ChannelBusy,
  type UpstreamResponse,
  UpstreamRunLost,
} from '../types.ts';
import { transientFailure } from '../upstream-failure.ts';
import {
  type CogPrediction,
  fileUrlsOf,
  inputOf,
  predictionIdOf,
  problemOf,
  readPrediction,
} from './wire.ts';

/**
 * How often a run is looked at again (milliseconds). A look reads only the webhooks stored for the run,
 * never the provider, so it can be frequent: outputs sent as links are fetched soon after they appear.
 */
const POLL_MS = 1_000;
/** The Cog adapter of one channel. */
export class CogAdapter implements Adapter {
  readonly #deps: AdapterDeps;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
  }

  /**
   * Always available: PROVIDERS.md §3 consults no health check, and a model's tasks are refused only when
   * every channel of it is disabled or open (CONTRACT §11). A server that cannot take predictions fails
   * the runs, which opens the channel's circuit.
   */
  async ensureAvailable(
    _request: { model: string; settings: Readonly<Record<string, unknown>> },
    _signal?: AbortSignal,
  ): Promise<void> {}

  async create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string> {
    const id = predictionIdOf(run.key);
    const body = {
      id,
      input: inputOf(request.settings, await this.#deps.inputLinks(request, signal)),
      webhook: this.#deps.callbacks.urlFor(run.key),
      webhook_events_filter: ['start', 'completed'],
    };
    const response = await this.#request('PUT', `/predictions/${encodeURIComponent(id)}`, body, signal, {
      prefer: 'respond-async',
    });
    if (response.status === 200 || response.status === 201 || response.status === 202) return run.key;
    throw this.#refusal(response, 'create prediction');
  }

  /**
   * The PUT names the prediction by the run key, and a PUT with the id of a running prediction answers that
   * prediction (PROVIDERS.md §3): a create that timed out is repeated under the same key, never a new one,
   * whose PUT would start a second prediction (or meet 409 while the first holds the only slot).
   */
  isCreateIdempotent(): boolean {
    return true;
  }

  /** A run is known upstream once a webhook of it arrived; otherwise the PUT (idempotent by id) is repeated. */
  async find(_request: GenerationRequest, run: RunStart, _signal: AbortSignal): Promise<string | null> {
    const bodies = await this.#deps.callbacks.received(run.key);
    return bodies.length > 0 ? run.key : null;
  }

  async status(handle: string, _request: GenerationRequest, _signal: AbortSignal): Promise<GenerationStatus> {
    const last = await this.#latest(handle);
    switch (last?.status) {
      case 'succeeded':
        return { state: 'succeeded' };
      case 'failed':
        return { state: 'failed', code: 'generation_failed', reason: last.error ?? 'prediction failed' };
      case 'canceled':
        // We cancel only runs we no longer wait for: a cancel seen here came from elsewhere, and the
        // prediction will never complete. A new run takes its place (PROVIDERS.md: an unrequested cancel
        // is transient, as for Tripo and Seedance), instead of waiting out the channel's timeout.
        throw new UpstreamRunLost(`${this.#deps.channel.name}: prediction canceled upstream`);
      case 'processing':
        return { state: 'running', progress: 50, pollAfterMs: POLL_MS };
      default:
        return { state: 'running', progress: 5, pollAfterMs: POLL_MS };
    }
  }

  async outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    const last = await this.#latest(handle);
    if (last?.status !== 'succeeded')
      throw new GeneratorTransientError(`${this.#deps.channel.name}: no completed prediction to read`);
    const urls = fileUrlsOf(last.output);
    if (urls.length === 0) throw new GenerationError('generation_failed', 'the prediction returned no files');
    const downloads = [];
    for (const url of urls) downloads.push(await this.#deps.download(url, dir, signal));
    return outputsOf(filesForPlan(downloads, request.plan), request.plan);
  }

  async cancel(handle: string, signal: AbortSignal): Promise<void> {
    const id = predictionIdOf(handle);
    const response = await this.#request(
      'POST',
      `/predictions/${encodeURIComponent(id)}/cancel`,
      undefined,
      signal,
    );
    // 404: the prediction finished or never started; either way nothing runs any more.
    if ((response.status >= 200 && response.status < 300) || response.status === 404) return;
    // Not made: a busy or broken server (429, 5xx) is asked again later (src/worker/upstream-cancels.ts).
    throw this.#refusal(response, 'cancel prediction');
  }

  /** The newest prediction a webhook brought for the run, final states first (webhooks may cross). */
  async #latest(runKey: string): Promise<CogPrediction | null> {
    const predictions = (await this.#deps.callbacks.received(runKey))
      .map(readPrediction)
      .filter((p): p is CogPrediction => p !== null);
    const final = predictions.find((p) => ['succeeded', 'failed', 'canceled'].includes(p.status));
    return final ?? predictions.at(-1) ?? null;
  }

  /** The error a non-success answer means (PROVIDERS.md §3 and "Normalised mapping"). */
  #refusal(response: UpstreamResponse, what: string): Error {
    const name = this.#deps.channel.name;
    // Every slot (`concurrency.max`) busy: no slot, the run waits queued and tries again.
    if (response.status === 409) return new ChannelBusy(`${name}: ${what}: no free slot (409)`);
    // Cog has no keys; a 401/403 comes from a proxy in front of it and is the channel's problem, not the task's.
    if (response.status === 401 || response.status === 403)
      return new GeneratorTransientError(
        `${name}: ${what}: the server refused the channel's key (${response.status})`,
      );
    const transient = transientFailure(response, `${name}: ${what}`);
    if (transient) return transient;
    if (response.status >= 400)
      return new GenerationError(
        'generation_failed',
        `${what}: ${problemOf(response.body, response.status)}`,
      );
    return new GeneratorTransientError(`${name}: ${what}: unexpected HTTP ${response.status}`);
  }

  #request(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    json: unknown,
    signal: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<UpstreamResponse> {
    const key = this.#deps.channel.secrets.api_key;
    // Cog itself has no authentication; a key is sent only for a proxy in front of it.
    if (key) headers.authorization = `Bearer ${key}`;
    return this.#deps.http.request({
      method,
      path,
      headers,
      ...(json === undefined ? {} : { json }),
      signal,
    });
  }
}

function outputsOf(files: GenerationOutputs['files'], plan: GenerationPlan): GenerationOutputs {
  return { files, caption: plan.caption, texts: plan.texts };
}
