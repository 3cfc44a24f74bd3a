/**
 * Personas and singing voices at sunoapi.org (PROVIDERS.md §2, "Helper / library"): a persona is made
 * synchronously from a track of our own Suno run; a singing voice is validated (phrase), regenerated
 * (retry), verified and read until it has a voiceId. Upstream voice states map to ours as §2's table says.
 */
import { GenerationError, GeneratorTransientError } from '../../generator.ts';
import type {
  LibraryCreated,
  LibraryCreateRequest,
  LibraryPolledSettlement,
  PhraseRequest,
  RecordingCheck,
  SettleAnswer,
  SettleRequest,
} from '../../library.ts';
import type { AdapterDeps } from '../types.ts';
import { type SunoApi, stringField } from './wire.ts';

/** First question about a voice step (milliseconds). */
export const VOICE_FIRST_ASK_MS = 3_000;
/** Between two questions about a voice step (CONTRACT §11: every 5 s; Suno allows 20 requests / 10 s). */
export const VOICE_POLL_MS = 5_000;
/** A retry's new phrase is read for at most this long (milliseconds). */
export const PHRASE_WAIT_MS = 60_000;
/** Between two reads of a retry's phrase (milliseconds). */
export const PHRASE_POLL_MS = 2_000;
/** Run key of the voice calls' callback URL (no task has it, so its callbacks are dropped). */
export const VOICE_CALLBACK_KEY = 'library/suno-voices';
/** Languages Suno validates a singing voice in (PROVIDERS.md §2). */
export const SUNO_VOICE_LANGUAGES: ReadonlySet<string> = new Set([
  'en',
  'zh',
  'es',
  'fr',
  'pt',
  'de',
  'ja',
  'ko',
  'hi',
  'ru',
]);

/** validate-info states while Suno processes the piece (our `processing`). */
const VALIDATING = new Set(['wait_processing', 'processing_validate']);
/** validate-info and record-info states that end a step in failure (our `failed`). */
const FAILED = new Set(['processing_validate_fail', 'fail']);

const polled = (upstreamId?: string): LibraryPolledSettlement => ({
  afterMs: VOICE_FIRST_ASK_MS,
  pollMs: VOICE_POLL_MS,
  ...(upstreamId === undefined ? {} : { upstreamId }),
});

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A string field of the body (our creation body's fields). */
function text(fields: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = fields[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export class SunoSingers {
  readonly #deps: AdapterDeps;
  readonly #api: SunoApi;

  constructor(deps: AdapterDeps, api: SunoApi) {
    this.#deps = deps;
    this.#api = api;
  }

  /**
   * `generate-persona` from the persona's song version: only a track of our own Suno run has the ids it
   * needs; any other source is a refusal before any call (502 persona_create_failed).
   */
  async persona(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    const source = request.source;
    const taskId = source?.ids['taskId'];
    const audioId = source?.ids['audioId'];
    if (source?.provider !== 'suno' || taskId === undefined || audioId === undefined) {
      throw new GenerationError('generation_failed', 'a persona needs a song version made on suno');
    }
    const f = request.fields;
    const body = {
      taskId,
      audioId,
      name: text(f, 'name'),
      description: text(f, 'description'),
      ...(text(f, 'style') === undefined ? {} : { style: text(f, 'style') }),
    };
    const personaId = stringField(
      await this.#api.post('/api/v1/generate/generate-persona', body, signal),
      'personaId',
    );
    if (personaId === undefined)
      throw new GeneratorTransientError('suno generate-persona: no data.personaId');
    return { data: {}, upstreamId: personaId };
  }

  /** `voice/validate` of the piece; the phrase comes with `wait_validating` (asked by `settle`). */
  async create(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    const f = request.fields;
    const language = text(f, 'language') ?? 'en';
    if (!SUNO_VOICE_LANGUAGES.has(language)) {
      throw new GenerationError('generation_failed', `suno validates no singing voice in ${language}`);
    }
    const source = String(f['source_url']);
    const body = {
      voiceUrl: (await this.#deps.publicLinks([source]))(source),
      vocalStartS: f['start_seconds'],
      vocalEndS: f['end_seconds'],
      language,
      callBackUrl: this.#deps.callbacks.urlFor(VOICE_CALLBACK_KEY),
    };
    const taskId = await this.#api.create('/api/v1/voice/validate', body, signal);
    return { data: {}, upstreamId: taskId, polled: polled() };
  }

  /** A retry's new phrase: `voice/regenerate` (its key spelled `calBackUrl`), then validate-info. */
  async phrase(request: PhraseRequest, signal: AbortSignal): Promise<string> {
    const taskId = request.upstreamId;
    if (taskId === undefined) throw new GenerationError('generation_failed', 'the voice has no suno task');
    const callBackUrl = this.#deps.callbacks.urlFor(VOICE_CALLBACK_KEY);
    const answer = await this.#api.post(
      '/api/v1/voice/regenerate',
      { taskId, calBackUrl: callBackUrl },
      signal,
    );
    const isNew = (p: string | undefined): p is string => p !== undefined && !request.avoid.includes(p);
    const direct = stringField(answer, 'validateInfo');
    if (isNew(direct)) return direct;
    const deadline = this.#deps.clock.now().getTime() + PHRASE_WAIT_MS;
    for (;;) {
      const info = await this.#api.read('/api/v1/voice/validate-info', taskId, signal);
      const status = stringField(info, 'status') ?? '';
      const phrase = stringField(info, 'validateInfo');
      if (status === 'wait_validating' && isNew(phrase)) return phrase;
      if (FAILED.has(status)) {
        throw new GenerationError(
          'generation_failed',
          `suno voice ${status}: ${stringField(info, 'errorMessage') ?? ''}`,
        );
      }
      if (this.#deps.clock.now().getTime() >= deadline) {
        throw new GeneratorTransientError(`suno voice ${taskId}: no new phrase in time`);
      }
      await sleep(PHRASE_POLL_MS, signal);
    }
  }

  /** `voice/generate` with the singer's recording; its own task is read by `settle` (step `verify`). */
  async verify(check: RecordingCheck, signal: AbortSignal): Promise<LibraryPolledSettlement> {
    if (check.upstreamId === undefined) {
      throw new GenerationError('generation_failed', 'the voice has no suno task');
    }
    const body = {
      taskId: check.upstreamId,
      verifyUrl: (await this.#deps.publicLinks([check.recordingUrl]))(check.recordingUrl),
      voiceName: check.name,
      callBackUrl: this.#deps.callbacks.urlFor(VOICE_CALLBACK_KEY),
    };
    const taskId = await this.#api.create('/api/v1/voice/generate', body, signal);
    return polled(taskId);
  }

  /** Where a voice step stands: validate-info for `create`, voice record-info for `verify`. */
  async settle(request: SettleRequest, signal: AbortSignal): Promise<SettleAnswer> {
    if (request.step === 'create') {
      const info = await this.#api.read('/api/v1/voice/validate-info', request.upstreamId, signal);
      const status = stringField(info, 'status') ?? '';
      const phrase = stringField(info, 'validateInfo');
      if (status === 'wait_validating' && phrase !== undefined) return { state: 'done', data: { phrase } };
      if (FAILED.has(status)) return { state: 'failed', reason: reasonOf(info, status) };
      if (VALIDATING.has(status) || status === 'wait_validating') return { state: 'running' };
      throw new GeneratorTransientError(`suno validate-info: unreadable status ${JSON.stringify(status)}`);
    }
    const info = await this.#api.read('/api/v1/voice/record-info', request.upstreamId, signal);
    const status = stringField(info, 'status') ?? '';
    const voiceId = stringField(info, 'voiceId');
    if (status === 'success' && voiceId !== undefined) return { state: 'done', upstreamId: voiceId };
    if (FAILED.has(status)) return { state: 'failed', reason: reasonOf(info, status) };
    return { state: 'running' };
  }
}

function reasonOf(info: Record<string, unknown> | null, status: string): string {
  return stringField(info, 'errorMessage') ?? status;
}
