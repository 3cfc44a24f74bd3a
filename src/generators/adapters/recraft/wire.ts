/**
 * Recraft wire shapes (PROVIDERS.md §7): the API call with its token, the error classes its answers mean
 * (plain-text or JSON bodies), and our image settings as a generation body.
 */
import { GenerationError, type GenerationRequest, GeneratorTransientError } from '../../generator.ts';
import {
  type AdapterDeps,
  ChannelOutOfCredit,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../types.ts';
import { transientFailure } from '../upstream-failure.ts';

/** Our sizes as Recraft aspect ratios (PROVIDERS.md §7, decided there); pixels are the model's. */
export const ASPECTS: Readonly<Record<string, string>> = {
  '1024x1024': '1:1',
  '1365x1024': '4:3',
  '1024x1365': '3:4',
  '1536x1024': '3:2',
  '1024x1536': '2:3',
};
/** Upstream models: no style, a raster style, a vector style. */
export const RECRAFT_MODELS = {
  plain: 'recraftv4',
  raster: 'recraftv4_styles',
  vector: 'recraftv4_styles_vector',
} as const;

/** The channel's call to Recraft with its bearer token; answers may be plain text. */
export function callRecraft(
  deps: AdapterDeps,
  request: Omit<UpstreamRequest, 'raw'>,
): Promise<UpstreamResponse> {
  return deps.http.request({
    ...request,
    raw: true,
    headers: { ...request.headers, authorization: `Bearer ${deps.channel.secrets.api_key ?? ''}` },
  });
}

function textOf(response: UpstreamResponse): string {
  const body = response.body as { message?: unknown; error?: unknown; detail?: unknown } | null;
  if (body && typeof body === 'object') {
    const inner = body.message ?? body.error ?? body.detail;
    return typeof inner === 'string' ? inner : JSON.stringify(body);
  }
  return (response.bytes?.toString('utf8') ?? '').trim().slice(0, 500);
}

/**
 * The error a non-2xx answer means (PROVIDERS.md §7 "Errors", decided there): 429/5xx and 401/403 are
 * transient; 402 or a body naming credits or balance disables the channel; a body naming moderation or
 * policy is `content_refused`; any other 4xx is a final `generation_failed` with the body's text.
 */
export function refusalOf(deps: AdapterDeps, response: UpstreamResponse, what: string): Error {
  const name = deps.channel.name;
  const transient = transientFailure(response, `${name}: ${what}`);
  if (transient) return transient;
  const text = textOf(response);
  // The words are looked for in the whole body (every answer is read raw): a code field
  // (`not_enough_credits`) may name what the message does not.
  const whole = response.bytes?.toString('utf8').slice(0, 2000) ?? text;
  if (response.status === 401 || response.status === 403)
    return new GeneratorTransientError(
      `${name}: ${what}: the channel's token was refused (${response.status})`,
    );
  if (response.status === 402 || /credit|balance/i.test(whole))
    return new ChannelOutOfCredit(`${name}: ${what}: ${text || 'no credit'}`);
  if (/moderat|policy/i.test(whole)) return new GenerationError('content_refused', `${what}: ${text}`);
  if (response.status >= 400)
    return new GenerationError('generation_failed', `${what}: ${text || `HTTP ${response.status}`}`);
  return new GeneratorTransientError(`${name}: ${what}: unexpected HTTP ${response.status}`);
}

/** The style a task names, as Recraft knows it: its upstream id and type. */
export function styleOf(request: GenerationRequest): { id: string; type: 'raster' | 'vector' } | null {
  const styleId = request.settings['style_id'];
  if (typeof styleId !== 'string') return null;
  const record = request.inputs.records?.[styleId];
  const upstream = record?.['upstream_id'];
  if (typeof upstream !== 'string' || upstream === '')
    throw new GenerationError('generation_failed', `the style ${styleId} was not saved at recraft`);
  return { id: upstream, type: record?.['type'] === 'vector' ? 'vector' : 'raster' };
}

/** `POST /images/generations` body of an image task (PROVIDERS.md §7, "Our mapping"). */
export function generationBody(request: GenerationRequest, upstreamModels: Readonly<Record<string, string>>) {
  const s = request.settings;
  const style = styleOf(request);
  const size = String(s['size'] ?? '1024x1024');
  const kind = style === null ? 'plain' : style.type;
  return {
    prompt: String(s['prompt'] ?? ''),
    model: upstreamModels[kind] ?? RECRAFT_MODELS[kind],
    ...(style === null ? {} : { style_id: style.id }),
    size: ASPECTS[size] ?? size,
    n: Number(s['n'] ?? 1),
    response_format: 'url',
  };
}

/** The generation answer: one link per picture, and what it cost in Recraft credits. */
export interface RecraftImages {
  urls: string[];
  credits: number | null;
}

export function imagesOf(deps: AdapterDeps, response: UpstreamResponse): RecraftImages {
  if (response.status < 200 || response.status >= 300) throw refusalOf(deps, response, 'generate images');
  // A 2xx that is not Recraft's JSON (a gateway's page) is a broken answer, as for every provider.
  if (response.body === null || typeof response.body !== 'object')
    throw new GeneratorTransientError(
      `${deps.channel.name}: generate images: HTTP ${response.status} with a body that is not JSON`,
    );
  const body = response.body as { data?: unknown; credits?: unknown };
  const urls = (Array.isArray(body.data) ? body.data : [])
    .map((item) => (item as { url?: unknown }).url)
    .filter((url): url is string => typeof url === 'string' && url !== '');
  if (urls.length === 0) throw new GenerationError('generation_failed', 'recraft returned no images');
  return { urls, credits: typeof body.credits === 'number' ? body.credits : null };
}
