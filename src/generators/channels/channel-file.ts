/**
 * Reads and checks GENERATORS_FILE (CONTRACT §11): every problem stops the start with a message that names
 * the channel, so an operator never runs with half a channel file. Secrets come only from environment
 * variables the file names (`*_env`); a secret written into the file itself is refused.
 */
import fs from 'node:fs';
import { type Channel, PROVIDERS, type ProviderName } from '../adapters/types.ts';

/** A channel file that cannot be used; the message names the channel (or the file). */
export class ChannelFileError extends Error {
  override name = 'ChannelFileError';
}

/** Models each provider can serve; `null` = any model (CONTRACT §11, "What each provider serves"). */
export const PROVIDER_MODELS: Readonly<Record<ProviderName, readonly string[] | null>> = {
  simulator: null,
  cog: null,
  tripo: ['model-3d'],
  suno: ['music'],
  seedance: ['video', 'video-omni'],
  kling: ['video-elements'],
  elevenlabs: ['voice', 'music-styles'],
  recraft: ['image'],
};

/** Secret variables each provider needs (`<secret>_env` keys); cog may run without a key. */
const REQUIRED_SECRETS: Readonly<Record<ProviderName, readonly string[]>> = {
  simulator: [],
  cog: [],
  tripo: ['api_key'],
  suno: ['api_key'],
  seedance: ['api_key'],
  kling: ['access_key', 'secret_key'],
  elevenlabs: ['api_key'],
  recraft: ['api_key'],
};

/** The providers' public API roots, used when a channel has no `base_url`. */
const DEFAULT_BASE_URLS: Readonly<Record<ProviderName, string>> = {
  simulator: '',
  cog: '',
  tripo: 'https://api.tripo3d.ai/v2/openapi',
  suno: 'https://api.sunoapi.org',
  seedance: 'https://ark.ap-southeast.bytepluses.com/api/v3',
  kling: 'https://api-singapore.klingai.com',
  elevenlabs: 'https://api.elevenlabs.io',
  recraft: 'https://external.api.recraft.ai/v1',
};

const KNOWN_KEYS = new Set([
  'name',
  'provider',
  'models',
  'base_url',
  'priority',
  'weight',
  'max_concurrency',
  'timeout',
  'upstream_models',
  'api_key_env',
  'access_key_env',
  'secret_key_env',
]);
const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const DURATION = /^(\d+)(s|m|h)$/;
const DURATION_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };

export interface ChannelFileOptions {
  /** Model keys of the catalog. */
  models: readonly string[];
  /** Providers this build has an adapter for. */
  providers: readonly ProviderName[];
  env: NodeJS.ProcessEnv;
}

/** Reads the channel file at `file` and checks it; throws ChannelFileError. */
export function loadChannelFile(file: string, options: ChannelFileOptions): Channel[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ChannelFileError(`GENERATORS_FILE ${file} cannot be read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ChannelFileError(`GENERATORS_FILE ${file} is not JSON: ${(error as Error).message}`);
  }
  return parseChannels(parsed, options);
}

/** Checks a parsed channel file; throws ChannelFileError naming the channel at fault. */
export function parseChannels(parsed: unknown, options: ChannelFileOptions): Channel[] {
  const list = (parsed as { channels?: unknown } | null)?.channels;
  if (!Array.isArray(list)) throw new ChannelFileError('GENERATORS_FILE must be { "channels": [ … ] }');
  const seen = new Set<string>();
  return list.map((entry: unknown, index) => {
    const channel = parseChannel(entry, index, options);
    if (seen.has(channel.name))
      throw new ChannelFileError(`channel "${channel.name}": the name is used twice`);
    seen.add(channel.name);
    return channel;
  });
}

function parseChannel(entry: unknown, index: number, options: ChannelFileOptions): Channel {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    throw new ChannelFileError(`channel #${index + 1}: must be an object`);
  const e = entry as Record<string, unknown>;
  const label = typeof e.name === 'string' ? `channel "${e.name}"` : `channel #${index + 1}`;
  const fail = (message: string): never => {
    throw new ChannelFileError(`${label}: ${message}`);
  };
  if (typeof e.name !== 'string' || !NAME.test(e.name))
    fail('name must be 1-63 lowercase letters, digits, - or _');
  const name = e.name as string;
  for (const key of Object.keys(e))
    if (!KNOWN_KEYS.has(key))
      fail(
        key.endsWith('_key')
          ? `${key}: secrets go in environment variables (${key}_env)`
          : `unknown key ${key}`,
      );
  const provider = e.provider as ProviderName;
  if (!(PROVIDERS as readonly string[]).includes(String(e.provider)))
    fail(`unknown provider "${String(e.provider)}" (one of ${PROVIDERS.join(', ')})`);
  if (!options.providers.includes(provider)) fail(`provider ${provider} has no adapter in this build`);
  const models = e.models;
  if (!Array.isArray(models) || models.length === 0 || !models.every((m) => typeof m === 'string'))
    fail('models must be a non-empty list of model keys');
  const served = PROVIDER_MODELS[provider];
  for (const model of models as string[]) {
    if (!options.models.includes(model)) fail(`unknown model "${model}"`);
    if (served !== null && !served.includes(model))
      fail(`provider ${provider} cannot serve model "${model}"`);
  }
  return {
    name,
    provider,
    models: Object.freeze([...new Set(models as string[])]),
    baseUrl: baseUrlOf(e.base_url, provider, fail),
    secrets: Object.freeze(secretsOf(e, provider, options.env, fail)),
    priority: intOf(e.priority, 0, -1_000, 1_000, 'priority', fail),
    weight: intOf(e.weight, 1, 1, 1_000, 'weight', fail),
    maxConcurrency: intOf(e.max_concurrency, 10, 1, 10_000, 'max_concurrency', fail),
    timeoutMs: timeoutOf(e.timeout, fail),
    upstreamModels: Object.freeze(upstreamModelsOf(e.upstream_models, fail)),
  };
}

type Fail = (message: string) => never;

function baseUrlOf(value: unknown, provider: ProviderName, fail: Fail): string {
  // A Cog server is the operator's own: it has no public address to fall back to.
  if (value === undefined && provider === 'cog') return fail('provider cog needs base_url');
  if (value === undefined) return DEFAULT_BASE_URLS[provider];
  if (typeof value !== 'string') return fail('base_url must be a string');
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    fail(`base_url must be an absolute http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

function secretsOf(
  e: Record<string, unknown>,
  provider: ProviderName,
  env: NodeJS.ProcessEnv,
  fail: Fail,
): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const key of ['api_key', 'access_key', 'secret_key']) {
    const variable = e[`${key}_env`];
    if (variable === undefined) continue;
    if (typeof variable !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(variable))
      fail(`${key}_env must name an environment variable`);
    const value = env[variable as string]?.trim();
    if (!value) fail(`environment variable ${variable as string} (${key}_env) is not set`);
    secrets[key] = value as string;
  }
  for (const key of REQUIRED_SECRETS[provider])
    if (!(key in secrets)) fail(`provider ${provider} needs ${key}_env`);
  return secrets;
}

function intOf(value: unknown, fallback: number, min: number, max: number, key: string, fail: Fail): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    fail(`${key} must be an integer from ${min} to ${max}`);
  return value as number;
}

function timeoutOf(value: unknown, fail: Fail): number {
  if (value === undefined) return 30 * 60_000;
  const match = typeof value === 'string' ? DURATION.exec(value) : null;
  const ms = match ? Number(match[1]) * (DURATION_MS[match[2] as string] as number) : 0;
  if (ms <= 0) fail('timeout must look like 90s, 30m or 2h');
  return ms;
}

function upstreamModelsOf(value: unknown, fail: Fail): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('upstream_models must map our model versions to upstream model ids');
  for (const [k, v] of Object.entries(value))
    if (typeof v !== 'string' || v.length === 0) fail(`upstream_models.${k} must be a non-empty string`);
  return { ...(value as Record<string, string>) };
}
