/**
 * The adapter registry: which factory builds the adapter of each provider. Each provider's adapter adds
 * its one line here; a channel file naming a provider without an adapter is refused at start.
 */
import type { AdapterFactory, ProviderName } from '../adapters/types.ts';
import type { Generator } from '../generator.ts';

/** Factories of the real providers' adapters. */
const PROVIDER_ADAPTERS: Partial<Record<ProviderName, AdapterFactory>> = {};

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
