export {
  type GeneratedFile,
  type GenerationOutputs,
  GenerationError,
  type GenerationRequest,
  type GenerationStatus,
  type Generator,
  GeneratorTransientError,
  GeneratorUnavailable,
  type RunStart,
  type UpstreamCost,
} from './generator.ts';
export { hasMarker, SIM_MARKERS, Simulator } from './simulator/simulator.ts';
