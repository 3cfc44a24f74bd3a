/** Models as callers and operators see them: the catalog joined with the state the operator sets. */
export {
  DEFAULT_MAX_ACTIVE,
  type ModelPatch,
  ModelService,
  type ModelView,
  type ModeView,
} from './model-service.ts';
