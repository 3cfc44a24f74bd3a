import type { AdapterFactory } from '../types.ts';
import { CogAdapter } from './cog-adapter.ts';

export { CogAdapter } from './cog-adapter.ts';

/** Builds the Cog adapter of a channel (provider `cog`). */
export const createCogAdapter: AdapterFactory = (deps) => new CogAdapter(deps);
