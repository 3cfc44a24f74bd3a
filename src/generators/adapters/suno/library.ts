/**
 * The library side of the Suno adapter (PROVIDERS.md §2, "Helper / library"): the free helpers `lyrics`
 * (async task, polled) and `style-boost` (synchronous), personas and singing voices (singers.ts).
 * Busy or broken is 503 sg_unavailable; a refusal is the library's 502. No credit is thrown as
 * `ChannelOutOfCredit`: the channel router disables the channel and answers 503 (channel-library.ts).
 */
import { firstChars } from '../../../catalog/index.ts';
import { GenerationError, GeneratorTransientError, GeneratorUnavailable } from '../../generator.ts';
import {
  type HelperIO,
  type HelperName,
  type LibraryCreated,
  type LibraryCreateRequest,
  type LibraryGenerator,
  type LibraryPolledSettlement,
  LibraryRejected,
  type LyricsVariant,
  type PhraseRequest,
  type RecordingCheck,
  type SettleAnswer,
  type SettleRequest,
} from '../../library.ts';
import { type AdapterDeps, ChannelOutOfCredit } from '../types.ts';
import { SunoSingers } from './singers.ts';
import { asObject, SunoApi, stringField } from './wire.ts';

/** PROVIDERS.md §2, decided here: the lyrics task is polled for at most 60 s. */
export const LYRICS_WAIT_MS = 60_000;
/** Between two lyrics reads (Suno allows 20 requests / 10 s per key). */
export const LYRICS_POLL_MS = 2_000;
/** Run key of the lyrics helper's callback URL (no task has it, so its callbacks are dropped). */
export const LYRICS_CALLBACK_KEY = 'helpers/suno-lyrics';
/** Upstream limit of a lyrics prompt (characters). */
export const LYRICS_PROMPT_MAX = 200;

const LYRICS_RUNNING = new Set(['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS']);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The helpers' view of the adapter errors: busy or broken → 503, refused → 502 (libraries/ask-generator).
 * No credit goes on as it is, for the channel router to disable the channel.
 */
async function asHelperCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ChannelOutOfCredit) throw error;
    if (error instanceof GeneratorTransientError) {
      throw new GeneratorUnavailable(error.message, { cause: error });
    }
    if (error instanceof GenerationError) throw new LibraryRejected(error.message, { cause: error });
    throw error;
  }
}

export class SunoLibrary implements LibraryGenerator {
  readonly #deps: AdapterDeps;
  readonly #api: SunoApi;
  readonly #singers: SunoSingers;

  constructor(deps: AdapterDeps) {
    this.#deps = deps;
    this.#api = new SunoApi(deps.channel, deps.http);
    this.#singers = new SunoSingers(deps, this.#api);
  }

  async ensureAvailable(): Promise<void> {}

  async createRecord(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    if (request.library === 'personas') return asHelperCall(() => this.#singers.persona(request, signal));
    if (request.library === 'voices') return asHelperCall(() => this.#singers.create(request, signal));
    throw new GeneratorUnavailable(`suno keeps no ${request.library}`);
  }

  /** Only a retry asks Suno for a phrase: the first one comes with the validation (`settle`). */
  async issuePhrase(request: PhraseRequest, signal: AbortSignal): Promise<string> {
    return asHelperCall(() => this.#singers.phrase(request, signal));
  }

  async checkRecording(request: RecordingCheck, signal: AbortSignal): Promise<LibraryPolledSettlement> {
    return asHelperCall(() => this.#singers.verify(request, signal));
  }

  async settle(request: SettleRequest, signal: AbortSignal): Promise<SettleAnswer> {
    try {
      return await asHelperCall(() => this.#singers.settle(request, signal));
    } catch (error) {
      // Suno refused to tell (an unknown task): the step ended without a result.
      if (error instanceof LibraryRejected) return { state: 'failed', reason: error.message };
      throw error;
    }
  }

  async runHelper<H extends HelperName>(
    helper: H,
    input: HelperIO[H]['input'],
    signal: AbortSignal,
  ): Promise<HelperIO[H]['output']> {
    if (helper === 'lyrics') {
      const { prompt } = input as HelperIO['lyrics']['input'];
      return (await asHelperCall(() => this.#lyrics(prompt, signal))) as HelperIO[H]['output'];
    }
    if (helper === 'style-boost') {
      const { style } = input as HelperIO['style-boost']['input'];
      return (await asHelperCall(() => this.#styleBoost(style, signal))) as HelperIO[H]['output'];
    }
    throw new GeneratorUnavailable(`suno has no ${helper} helper`);
  }

  async #styleBoost(style: string, signal: AbortSignal): Promise<HelperIO['style-boost']['output']> {
    const data = await this.#api.post('/api/v1/style/generate', { content: style }, signal);
    const result = stringField(data, 'result');
    if (result === undefined) throw new GeneratorTransientError('suno style boost: no data.result');
    return { style: firstChars(result, 1000) };
  }

  async #lyrics(prompt: string, signal: AbortSignal): Promise<HelperIO['lyrics']['output']> {
    // The endpoint requires a callback URL, but a helper has no run and is polled: one fixed key per
    // channel, so the service keeps one token for all lyrics calls, and what Suno posts there wakes nothing.
    const callBackUrl = this.#deps.callbacks.urlFor(LYRICS_CALLBACK_KEY);
    const body = { prompt: firstChars(prompt, LYRICS_PROMPT_MAX), callBackUrl };
    const taskId = await this.#api.create('/api/v1/lyrics', body, signal);
    const deadline = this.#deps.clock.now().getTime() + LYRICS_WAIT_MS;
    for (;;) {
      const data = await this.#api.read('/api/v1/lyrics/record-info', taskId, signal);
      const status = stringField(data, 'status') ?? '';
      if (status === 'SUCCESS') return { variants: lyricsVariants(data) };
      if (!LYRICS_RUNNING.has(status)) {
        const message = stringField(data, 'errorMessage');
        throw new GenerationError(
          'generation_failed',
          `suno lyrics ${status}${message ? `: ${message}` : ''}`,
        );
      }
      if (this.#deps.clock.now().getTime() >= deadline) {
        throw new GeneratorTransientError(`suno lyrics task ${taskId} did not finish in time`);
      }
      await sleep(LYRICS_POLL_MS, signal);
    }
  }
}

/** The successful variants of a finished lyrics task; none at all is a refusal. */
function lyricsVariants(data: Record<string, unknown> | null): LyricsVariant[] {
  const list = asObject(data?.['response'])?.['lyricsData'];
  const variants: LyricsVariant[] = [];
  for (const item of Array.isArray(list) ? list : []) {
    const entry = asObject(item);
    const text = stringField(entry, 'text');
    const status = stringField(entry, 'status');
    if (text === undefined || (status !== undefined && status !== 'complete' && status !== 'SUCCESS'))
      continue;
    variants.push({ title: stringField(entry, 'title') ?? 'Untitled', text });
  }
  if (variants.length === 0) throw new GenerationError('generation_failed', 'suno lyrics: no variants');
  return variants;
}
