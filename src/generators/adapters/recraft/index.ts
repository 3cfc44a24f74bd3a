import type { AdapterFactory } from '../types.ts';
import { RecraftAdapter } from './adapter.ts';

export { RecraftAdapter } from './adapter.ts';
export { ASPECTS, RECRAFT_MODELS } from './wire.ts';

/** Builds the Recraft adapter of a channel (provider `recraft`). */
export const createRecraftAdapter: AdapterFactory = (deps) => new RecraftAdapter(deps);
