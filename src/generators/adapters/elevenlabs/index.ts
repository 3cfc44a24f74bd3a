import type { AdapterFactory } from '../types.ts';
import { ElevenLabsAdapter } from './adapter.ts';

export { ElevenLabsAdapter } from './adapter.ts';
export { MAX_DIALOGUE_VOICES, OUTPUT_FORMAT } from './wire.ts';

/** Builds the ElevenLabs adapter of a channel (provider `elevenlabs`). */
export const createElevenLabsAdapter: AdapterFactory = (deps) => new ElevenLabsAdapter(deps);
