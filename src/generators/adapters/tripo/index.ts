/** Tripo3D (PROVIDERS.md §1): model-3d in every mode. */
export { createTripoAdapter } from './tripo-adapter.ts';
