/** Tripo3D (PROVIDERS.md §1): model-3d in every mode. */
export { createTripoAdapter, TRIPO_BASE_URL, TRIPO_MODELS } from './tripo-adapter.ts';
