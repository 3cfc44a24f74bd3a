/**
 * Personas and singing voices of the fake sunoapi.org (`suno.ts`, PROVIDERS.md §2 "Helper / library"):
 * `generate-persona` from a track of one of the fake's music tasks (one persona per audioId); a voice's
 * validation moving `wait_processing` → `processing_validate` → `wait_validating` (with the phrase) one
 * `stepMs` at a time, `regenerate` issuing a new phrase, and a verification moving `wait` → `processing`
 * → `success` with a voiceId. Markers: `[suno:voice-fail]` in the source URL fails the validation
 * (`processing_validate_fail`); in the recording URL or the voice name it fails the verification (`fail`).
 * When a validation or a verification ends, its body as validate-info / record-info shows it is posted to
 * the call's callBackUrl.
 */
import { randomUUID } from 'node:crypto';
import { hasMarker } from './suno-tasks.ts';

/** Languages the fake validates (PROVIDERS.md §2). */
const LANGUAGES = ['en', 'zh', 'es', 'fr', 'pt', 'de', 'ja', 'ko', 'hi', 'ru'];
const PHRASES = [
  'Silver rivers hum beneath the morning sky',
  'Lanterns sway along the quiet harbour road',
  'Every window holds a song about the sea',
  'Golden fields remember summer in the rain',
];

export interface FakeValidation {
  id: string;
  body: Record<string, unknown>;
  createdAt: number;
  /** Phrases issued, the current one last. */
  phrases: string[];
  fails: boolean;
}

export interface FakeVerification {
  id: string;
  validation: string;
  body: Record<string, unknown>;
  createdAt: number;
  voiceId: string;
  fails: boolean;
}

/** What a call answers: the envelope's code and message, or its data. */
export type FakeAnswer = { code: number; msg: string } | { data: unknown };

const refuse = (msg: string): FakeAnswer => ({ code: 400, msg });

export class FakeVoices {
  readonly personas = new Map<string, { id: string; body: Record<string, unknown> }>();
  readonly validations = new Map<string, FakeValidation>();
  readonly verifications = new Map<string, FakeVerification>();
  /** Fake music tracks by audio id → their task id (the fake's tracks are `<taskId>-a<n>`). */
  readonly #trackOf: (audioId: string) => string | undefined;
  readonly #stepMs: () => number;
  /** Posts `body()` to `url` after `afterMs` (the fake's callback sender). */
  readonly #notify: (url: string, body: () => unknown, afterMs: number) => void;

  constructor(
    trackOf: (audioId: string) => string | undefined,
    stepMs: () => number,
    notify: (url: string, body: () => unknown, afterMs: number) => void,
  ) {
    this.#trackOf = trackOf;
    this.#stepMs = stepMs;
    this.#notify = notify;
  }

  /** True for a persona id or a voice id the fake issued (what `personaId` of a music body may name). */
  knowsSinger(id: string): boolean {
    if ([...this.personas.values()].some((p) => p.id === id)) return true;
    return [...this.verifications.values()].some(
      (v) => v.voiceId === id && this.#verifyState(v) === 'success',
    );
  }

  #stage(createdAt: number): number {
    return Math.floor((Date.now() - createdAt) / this.#stepMs());
  }

  #validateState(v: FakeValidation): string {
    const stage = this.#stage(v.createdAt);
    if (stage < 1) return 'wait_processing';
    if (stage < 2) return 'processing_validate';
    return v.fails ? 'processing_validate_fail' : 'wait_validating';
  }

  #verifyState(v: FakeVerification): string {
    const stage = this.#stage(v.createdAt);
    if (stage < 1) return 'wait';
    if (stage < 2) return 'processing';
    return v.fails ? 'fail' : 'success';
  }

  /** Answers a persona or voice call, or undefined when the path is none of them. */
  handle(
    method: string,
    path: string,
    taskId: string,
    body: Record<string, unknown>,
  ): FakeAnswer | undefined {
    if (method === 'POST' && path === '/api/v1/generate/generate-persona') return this.#persona(body);
    if (method === 'POST' && path === '/api/v1/voice/validate') return this.#validate(body);
    if (method === 'POST' && path === '/api/v1/voice/regenerate') return this.#regenerate(body);
    if (method === 'POST' && path === '/api/v1/voice/generate') return this.#verify(body);
    if (method === 'GET' && path === '/api/v1/voice/validate-info') return this.#validateInfo(taskId);
    if (method === 'GET' && path === '/api/v1/voice/record-info') return this.#recordInfo(taskId);
    return undefined;
  }

  #persona(body: Record<string, unknown>): FakeAnswer {
    const missing = ['taskId', 'audioId', 'name', 'description'].filter((f) => typeof body[f] !== 'string');
    if (missing.length > 0) return refuse(`missing ${missing.join(', ')}`);
    const audioId = String(body['audioId']);
    if (this.#trackOf(audioId) !== body['taskId']) return refuse('no such track of that task');
    if (this.personas.has(audioId)) return refuse('a persona of this track exists');
    const persona = { id: `persona-${randomUUID()}`, body };
    this.personas.set(audioId, persona);
    return { data: { personaId: persona.id } };
  }

  #validate(body: Record<string, unknown>): FakeAnswer {
    const missing = ['voiceUrl', 'vocalStartS', 'vocalEndS', 'language', 'callBackUrl'].filter(
      (f) => body[f] === undefined,
    );
    if (missing.length > 0) return refuse(`missing ${missing.join(', ')}`);
    if (!LANGUAGES.includes(String(body['language']))) return refuse('unsupported language');
    const id = randomUUID().replaceAll('-', '');
    this.validations.set(id, {
      id,
      body,
      createdAt: Date.now(),
      phrases: [PHRASES[0] as string],
      fails: hasMarker(body['voiceUrl'], '[suno:voice-fail]'),
    });
    const info = (): unknown =>
      'data' in this.#validateInfo(id) ? { code: 200, msg: 'success', ...this.#validateInfo(id) } : null;
    this.#notify(String(body['callBackUrl']), info, 2 * this.#stepMs() + 5);
    return { data: { taskId: id } };
  }

  #regenerate(body: Record<string, unknown>): FakeAnswer {
    // Suno spells the key so on this endpoint (PROVIDERS.md §2).
    if (typeof body['calBackUrl'] !== 'string') return refuse('missing calBackUrl');
    const v = this.validations.get(String(body['taskId']));
    if (v === undefined) return { code: 404, msg: 'task not found' };
    v.phrases.push(PHRASES[v.phrases.length % PHRASES.length] as string);
    v.fails = false;
    return { data: { taskId: v.id } };
  }

  #verify(body: Record<string, unknown>): FakeAnswer {
    const missing = ['taskId', 'verifyUrl', 'voiceName', 'callBackUrl'].filter((f) => body[f] === undefined);
    if (missing.length > 0) return refuse(`missing ${missing.join(', ')}`);
    const v = this.validations.get(String(body['taskId']));
    if (v === undefined) return { code: 404, msg: 'task not found' };
    if (this.#validateState(v) !== 'wait_validating')
      return refuse('the voice is not waiting for a recording');
    const id = randomUUID().replaceAll('-', '');
    this.verifications.set(id, {
      id,
      validation: v.id,
      body,
      createdAt: Date.now(),
      voiceId: `voice-${randomUUID()}`,
      fails: hasMarker([body['verifyUrl'], body['voiceName']], '[suno:voice-fail]'),
    });
    const info = (): unknown => ({ code: 200, msg: 'success', ...this.#recordInfo(id) });
    this.#notify(String(body['callBackUrl']), info, 2 * this.#stepMs() + 5);
    return { data: { taskId: id } };
  }

  #validateInfo(taskId: string): FakeAnswer {
    const v = this.validations.get(taskId);
    if (v === undefined) return { code: 404, msg: 'task not found' };
    const status = this.#validateState(v);
    return {
      data: {
        taskId,
        validateInfo: status === 'wait_validating' ? v.phrases.at(-1) : '',
        status,
        errorCode: status === 'processing_validate_fail' ? 400 : null,
        errorMessage: status === 'processing_validate_fail' ? 'no clear singing voice in the piece' : null,
      },
    };
  }

  #recordInfo(taskId: string): FakeAnswer {
    const v = this.verifications.get(taskId);
    if (v === undefined) return { code: 404, msg: 'task not found' };
    const status = this.#verifyState(v);
    return {
      data: {
        taskId,
        voiceId: status === 'success' ? v.voiceId : '',
        status,
        errorCode: status === 'fail' ? 400 : null,
        errorMessage: status === 'fail' ? 'the recording does not match the phrase' : null,
      },
    };
  }
}
