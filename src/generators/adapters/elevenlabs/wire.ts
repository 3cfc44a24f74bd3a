/**
 * ElevenLabs wire shapes (PROVIDERS.md §6): the API call with its key, the error classes its answers
 * mean, and the dialogue inputs built from our text.
 */
import { GenerationError, type GenerationRequest, GeneratorTransientError } from '../../generator.ts';
import { OUTPUT_SNIFF_BYTES, sniffOutput } from '../output-type.ts';
import {
  type AdapterDeps,
  ChannelOutOfCredit,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../types.ts';
import { transientFailure } from '../upstream-failure.ts';

/** Every audio answer: MP3, 44.1 kHz, 128 kbit/s. */
export const OUTPUT_FORMAT = 'mp3_44100_128';
/** ElevenLabs refuses a dialogue with more distinct voices. */
export const MAX_DIALOGUE_VOICES = 10;
/** Built-in upstream models (a channel's `upstream_models` overrides them by our mode). */
export const UPSTREAM_MODELS: Readonly<Record<string, string>> = {
  text_to_dialogue: 'eleven_v3',
  voice_change: 'eleven_multilingual_sts_v2',
  'music-styles': 'music_v1',
};

/** The channel's call to ElevenLabs with `xi-api-key`; answers may be audio bytes. */
export function callElevenLabs(
  deps: AdapterDeps,
  request: Omit<UpstreamRequest, 'raw'>,
): Promise<UpstreamResponse> {
  return deps.http.request({
    ...request,
    raw: true,
    headers: { ...request.headers, 'xi-api-key': deps.channel.secrets.api_key ?? '' },
  });
}

function detailOf(body: unknown): { status: string; message: string } {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (Array.isArray(detail)) {
    const message = detail
      .map((d) => {
        const item = d as { loc?: unknown; msg?: unknown };
        const loc = Array.isArray(item.loc) ? item.loc.join('.') : '';
        return `${loc ? `${loc}: ` : ''}${String(item.msg ?? '')}`;
      })
      .join('; ');
    return { status: 'validation_error', message };
  }
  if (detail && typeof detail === 'object') {
    const d = detail as { status?: unknown; message?: unknown };
    return { status: String(d.status ?? ''), message: String(d.message ?? d.status ?? '') };
  }
  return { status: '', message: typeof detail === 'string' ? detail : '' };
}

/**
 * The error a non-2xx answer means (PROVIDERS.md §6 "Errors" and "Normalised mapping"): 429 and 5xx and
 * `invalid_api_key` are transient; `quota_exceeded` disables the channel; `copyright_violation` is a
 * content refusal; any other 4xx is a final `generation_failed` with the provider's message.
 */
export function refusalOf(deps: AdapterDeps, response: UpstreamResponse, what: string): Error {
  const name = deps.channel.name;
  const { status, message } = detailOf(response.body);
  const transient = transientFailure(response, `${name}: ${what}${status ? ` (${status})` : ''}`);
  if (transient) return transient;
  if (status === 'quota_exceeded') return new ChannelOutOfCredit(`${name}: ${what}: ${message}`);
  if (status === 'invalid_api_key' || (response.status === 401 && status === ''))
    return new GeneratorTransientError(`${name}: ${what}: the channel's key was refused`);
  if (status === 'copyright_violation') return new GenerationError('content_refused', message || status);
  if (response.status >= 400)
    return new GenerationError(
      'generation_failed',
      `${what}: ${message || status || `HTTP ${response.status}`}`,
    );
  return new GeneratorTransientError(`${name}: ${what}: unexpected HTTP ${response.status}`);
}

/**
 * The audio bytes of a 2xx answer, or the error the answer means. A 2xx whose bytes are not audio (JSON,
 * a gateway's HTML page) carried no audio: transient, like a broken answer of any provider.
 */
export async function audioOf(deps: AdapterDeps, response: UpstreamResponse, what: string): Promise<Buffer> {
  if (response.status < 200 || response.status >= 300) throw refusalOf(deps, response, what);
  const bytes = response.bytes;
  if (
    !bytes ||
    bytes.length === 0 ||
    response.body !== null ||
    (await sniffOutput(bytes.subarray(0, OUTPUT_SNIFF_BYTES))).kind !== 'audio'
  )
    throw new GeneratorTransientError(`${deps.channel.name}: ${what}: the answer carried no audio`);
  // The audio is the answer itself, never downloaded: the output cap downloads have is checked here. Final,
  // as calling again would bill another run for the same answer.
  if (bytes.length > deps.maxOutputBytes)
    throw new GenerationError(
      'generation_failed',
      `${what}: the audio (${bytes.length} bytes) is larger than the service stores (${deps.maxOutputBytes} bytes)`,
    );
  return bytes;
}

/** The ElevenLabs voice id of a voice record the settings name (its `upstream_id`). */
export function upstreamVoice(request: GenerationRequest, id: string): string {
  const upstream = request.inputs.records?.[id]?.['upstream_id'];
  if (typeof upstream !== 'string' || upstream === '')
    throw new GenerationError('generation_failed', `the voice ${id} was not saved at elevenlabs`);
  return upstream;
}

const TAG = /^\s*\[(voice(?:_\d+)?)\]\s*/;

/**
 * Dialogue inputs (PROVIDERS.md §6, decided there): each non-empty line is one input; a `[voice_N]`
 * prefix (stripped) picks `voice_N`, untagged lines and `[voice_1]` use `voice`. More than ten distinct
 * voices is a final `generation_failed` before any call.
 */
export function dialogueInputs(request: GenerationRequest): Array<{ text: string; voice_id: string }> {
  const s = request.settings;
  const inputs: Array<{ text: string; voice_id: string }> = [];
  // Lines end where the catalog's check of the tags sees them end (a RegExp's `^` with the m flag).
  for (const line of String(s['text'] ?? '').split(/\r\n|[\n\r\u2028\u2029]/)) {
    if (line.trim() === '') continue;
    const tag = TAG.exec(line)?.[1];
    const field = tag === undefined || tag === 'voice' || tag === 'voice_1' ? 'voice' : tag;
    const id = s[field];
    if (typeof id !== 'string')
      throw new GenerationError(
        'generation_failed',
        `text gives a line to [${tag}], but ${field} is not set`,
      );
    const text = line.replace(TAG, '').trim();
    if (text === '') continue;
    inputs.push({ text, voice_id: upstreamVoice(request, id) });
  }
  const voices = new Set(inputs.map((input) => input.voice_id));
  if (voices.size > MAX_DIALOGUE_VOICES)
    throw new GenerationError(
      'generation_failed',
      `the dialogue has ${voices.size} distinct voices; elevenlabs speaks at most ${MAX_DIALOGUE_VOICES} in one dialogue`,
    );
  if (inputs.length === 0) throw new GenerationError('generation_failed', 'the text has no line to speak');
  return inputs;
}
