/**
 * The adapter registry: which factory builds the adapter of each provider, one line per provider. What
 * each provider may serve (CONTRACT §11) is checked against PROVIDER_MODELS when the channel file loads; a
 * channel file naming a provider without an adapter is refused at start.
 */
import {
  type AdapterFactory,
  createCogAdapter,
  createElevenLabsAdapter,
  createKlingAdapter,
  createRecraftAdapter,
  createSeedanceAdapter,
  createSunoAdapter,
  createTripoAdapter,
  type ProviderName,
} from '../adapters/index.ts';
import type { Generator } from '../generator.ts';

/** Factories of the real providers' adapters. */
const PROVIDER_ADAPTERS: Partial<Record<ProviderName, AdapterFactory>> = {
  /** Any model: settings sent as the prediction's input, files from its output. */
  cog: createCogAdapter,
  /** model-3d, every mode. */
  tripo: createTripoAdapter,
  /** music, every mode, with the helpers, personas and singing voices on its library side. */
  suno: createSunoAdapter,
  /** video in every mode and video-omni, with its characters and voices kept by us. */
  seedance: createSeedanceAdapter,
  /** video-elements in every version, with the element library at Kling. */
  kling: createKlingAdapter,
  /** voice (cloned voices) and music-styles (music styles); synchronous calls with a local task record. */
  elevenlabs: createElevenLabsAdapter,
  /** image, with image styles and the enhance helper; synchronous calls with a local task record. */
  recraft: createRecraftAdapter,
};

/** Providers a channel may name in this build. */
export function registeredProviders(): ProviderName[] {
  return ['simulator', ...(Object.keys(PROVIDER_ADAPTERS) as ProviderName[])];
}

/**
 * Every factory, with `simulator` channels served by the process's one simulator (it keeps no state per
 * channel, so all of them can share it).
 */
export function adapterFactories(simulator: Generator): Partial<Record<ProviderName, AdapterFactory>> {
  return { ...PROVIDER_ADAPTERS, simulator: () => simulator };
}
