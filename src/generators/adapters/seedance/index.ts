export { createSeedanceAdapter, SEEDANCE_BASE_URL, SeedanceAdapter } from './adapter.ts';
export { SEEDANCE_MODEL, type SeedanceBody, taskBody } from './wire.ts';
