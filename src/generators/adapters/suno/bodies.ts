/**
 * Our music modes as sunoapi.org create calls (PROVIDERS.md §2, the mode table and its "decided here"
 * lines). Pure: the adapter resolves what needs I/O (public URLs, upstream ids) and passes it in.
 */
import { firstChars } from '../../../catalog/index.ts';
import { GenerationError } from '../../generator.ts';
import { artifactOfLink } from '../input-files.ts';

/** Settings as the catalog accepted them. */
type Settings = Readonly<Record<string, unknown>>;

/** One create call: the endpoint under the channel's base URL and its JSON body. */
export interface SunoCall {
  path: string;
  body: Record<string, unknown>;
}

/** What a body needs beyond the settings. */
export interface BodyContext {
  /** Upstream model id (`settings.model`, or the channel's `upstream_models` entry). */
  model: string;
  callBackUrl: string;
  /**
   * Input links as the provider sees them: absolute URLs of our uploads, and the direct links a run lends
   * for the caller's own result files (`AdapterDeps.inputLinks`).
   */
  publicUrl(url: string): string;
  /** Upstream persona id of `settings.persona` / `settings.voice`, when the settings name one. */
  singer?: { personaId: string; personaModel: 'style_persona' | 'voice_persona' };
  /** replace_upload: the source track's upstream task and audio ids. */
  source?: { taskId: string; audioId: string };
}

/** Upstream limit of a simple-mode `prompt` (our songDescription allows 3000). */
export const SIMPLE_PROMPT_MAX = 500;
/** Upstream limit of a replaced section (seconds). */
export const REPLACE_SECTION_MAX_SECONDS = 60;

/** The one URL of a track setting (`audio`, `audio2`: lists of at most one URL). */
function trackUrl(s: Settings, field: string, ctx: BodyContext): string {
  const value = s[field];
  const url = Array.isArray(value) ? value[0] : value;
  if (typeof url !== 'string') throw new GenerationError('generation_failed', `${field} is missing`);
  const shared = ctx.publicUrl(url);
  // An artifact link needs an API key: Suno could fetch only the direct link a run lends for it.
  if (artifactOfLink(shared) !== null) {
    throw new GenerationError(
      'generation_failed',
      `suno cannot fetch the artifact link in ${field}; upload the file`,
    );
  }
  return shared;
}

/** Copies the named settings that are set (and not empty strings, which mean "unset" in our schemas). */
function pick(s: Settings, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.filter((n) => s[n] !== undefined && s[n] !== '').map((n) => [n, s[n]]));
}

const WEIGHTS = ['styleWeight', 'weirdnessConstraint', 'audioWeight'] as const;

function singer(ctx: BodyContext): Record<string, unknown> {
  return ctx.singer === undefined
    ? {}
    : { personaId: ctx.singer.personaId, personaModel: ctx.singer.personaModel };
}

/**
 * The song fields of generate, cover_upload and mashup. Simple: `prompt` = songDescription (cut to the
 * upstream 500), only audioWeight of the knobs (reference: the others "are not sent in simple mode").
 * Advanced: lyrics, style, title, the knobs and `duration` (PROVIDERS.md: only with customMode true).
 */
function song(s: Settings, advancedExtras: readonly string[]): Record<string, unknown> {
  const base = { customMode: s['customMode'] === true, instrumental: s['instrumental'] === true };
  if (s['customMode'] !== true) {
    const description = firstChars(String(s['songDescription'] ?? ''), SIMPLE_PROMPT_MAX);
    return { ...base, prompt: description, ...pick(s, ['audioWeight']) };
  }
  return { ...base, ...pick(s, ['prompt', 'style', 'title', ...advancedExtras, ...WEIGHTS, 'duration']) };
}

/** The file name of a link without its extension (extend's default title). */
export function fileStem(url: string): string {
  let name: string;
  try {
    name = decodeURIComponent(new URL(url, 'http://x').pathname.split('/').pop() ?? '');
  } catch {
    name = '';
  }
  const stem = name.replace(/\.[^.]*$/, '').trim();
  return firstChars(stem === '' ? 'Track' : stem, 80);
}

/**
 * The prompt of an instrumental extension without style or prompt of its own (the reference lets both go):
 * Suno's `defaultParamFlag: false` takes uploadUrl + prompt, and needs the prompt (PROVIDERS.md §2).
 */
export const INSTRUMENTAL_EXTEND_PROMPT = 'Continue this track as an instrumental, in its own style.';

/**
 * upload-extend (PROVIDERS.md, decided here): `defaultParamFlag` true iff our `style` is set, then with
 * style, title (default: the file name without extension), prompt and continueAt; false takes uploadUrl
 * and prompt only (an instrumental one without a prompt gets INSTRUMENTAL_EXTEND_PROMPT).
 */
function extendBody(s: Settings, uploadUrl: string, ctx: BodyContext): Record<string, unknown> {
  const common = { uploadUrl, instrumental: s['instrumental'] === true, ...pick(s, ['prompt']) };
  if (s['style'] === undefined)
    return {
      ...common,
      prompt: s['prompt'] ?? INSTRUMENTAL_EXTEND_PROMPT,
      defaultParamFlag: false,
      ...singer(ctx),
    };
  return {
    ...common,
    defaultParamFlag: true,
    continueAt: s['continueAt'],
    style: s['style'],
    // The link Suno fetches names the file: for a result file used as input, its own name (the lent
    // link's), where the artifact link ends in its index.
    title: s['title'] ?? fileStem(uploadUrl),
    ...pick(s, ['negativeTags', 'vocalGender', ...WEIGHTS]),
    ...singer(ctx),
  };
}

/** The create call of one run of `music` in `mode`. Throws a final GenerationError for what Suno cannot do. */
export function sunoCreateCall(mode: string, s: Settings, ctx: BodyContext): SunoCall {
  const fixed = { model: ctx.model, callBackUrl: ctx.callBackUrl };
  switch (mode) {
    case 'generate':
      return {
        path: '/api/v1/generate',
        body: { ...song(s, ['vocalGender']), ...singer(ctx), ...fixed },
      };
    case 'sounds':
      return {
        path: '/api/v1/generate/sounds',
        body: {
          prompt: s['soundDescription'],
          soundLoop: s['soundLoop'] === true,
          ...pick(s, ['soundTempo']),
          // Our empty key means "any key"; upstream spells it `Any`.
          soundKey: s['soundKey'] === undefined || s['soundKey'] === '' ? 'Any' : s['soundKey'],
          ...fixed,
        },
      };
    case 'add_vocals':
      return {
        path: '/api/v1/generate/add-vocals',
        body: {
          uploadUrl: trackUrl(s, 'audio', ctx),
          ...pick(s, ['prompt', 'title', 'style', 'negativeTags', 'vocalGender', ...WEIGHTS]),
          ...fixed,
        },
      };
    case 'add_instrumental':
      return {
        path: '/api/v1/generate/add-instrumental',
        body: {
          uploadUrl: trackUrl(s, 'audio', ctx),
          ...pick(s, ['title', 'tags', 'negativeTags', 'vocalGender', ...WEIGHTS]),
          ...fixed,
        },
      };
    case 'cover_upload':
      return {
        path: '/api/v1/generate/upload-cover',
        body: {
          uploadUrl: trackUrl(s, 'audio', ctx),
          ...song(s, ['negativeTags']),
          ...singer(ctx),
          ...fixed,
        },
      };
    case 'extend':
      return {
        path: '/api/v1/generate/upload-extend',
        body: { ...extendBody(s, trackUrl(s, 'audio', ctx), ctx), ...fixed },
      };
    case 'replace_upload':
      return { path: '/api/v1/generate/replace-section', body: replaceBody(s, ctx) };
    case 'mashup':
      return {
        path: '/api/v1/generate/mashup',
        body: {
          uploadUrlList: [trackUrl(s, 'audio', ctx), trackUrl(s, 'audio2', ctx)],
          ...song(s, []),
          ...fixed,
        },
      };
    default:
      throw new GenerationError('generation_failed', `suno serves no music mode ${mode}`);
  }
}

/**
 * replace-section (PROVIDERS.md, decided here): only for a track generated upstream, a section of at most
 * 60 s; otherwise a final failure before any call.
 */
function replaceBody(s: Settings, ctx: BodyContext): Record<string, unknown> {
  if (ctx.source === undefined) {
    throw new GenerationError(
      'generation_failed',
      'suno replaces a section only of a track it generated on this service; this audio was not',
    );
  }
  const section = Number(s['infillEndS']) - Number(s['infillStartS']);
  if (section > REPLACE_SECTION_MAX_SECONDS) {
    throw new GenerationError(
      'generation_failed',
      `suno replaces at most ${REPLACE_SECTION_MAX_SECONDS} s; the section is ${section} s`,
    );
  }
  return {
    taskId: ctx.source.taskId,
    audioId: ctx.source.audioId,
    ...pick(s, ['prompt', 'tags', 'title', 'infillStartS', 'infillEndS', 'negativeTags', 'fullLyrics']),
    callBackUrl: ctx.callBackUrl,
  };
}
