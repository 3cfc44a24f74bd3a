/** The Suno provider (PROVIDERS.md §2): `music` runs, its lyrics and style-boost helpers, personas and voices. */
import type { Adapter, AdapterDeps } from '../types.ts';
import { SunoAdapter } from './adapter.ts';
import { SunoLibrary } from './library.ts';

export { SUNO_LAG_POLL_MS, SUNO_POLL_MS, SunoAdapter } from './adapter.ts';
export { type BodyContext, INSTRUMENTAL_EXTEND_PROMPT, type SunoCall, sunoCreateCall } from './bodies.ts';
export { LYRICS_WAIT_MS, SunoLibrary } from './library.ts';

/** The adapter of one `suno` channel, with its library side (helpers, personas, singing voices). */
export function createSunoAdapter(deps: AdapterDeps): Adapter {
  const adapter = new SunoAdapter(deps);
  adapter.library = new SunoLibrary(deps);
  return adapter;
}
