export {
  type AdapterDeps,
  type AdapterFactory,
  type AdapterRuntime,
  artifactOfLink,
  CALLBACK_PROVIDERS,
  type CallbackAddress,
  type CallbackProvider,
  CallbackStore,
  type Channel,
  ChannelBusy,
  ChannelOutOfCredit,
  calledBackRunOf,
  createAdapterDeps,
  isProviderName,
  type ProviderName,
  type StoredArtifact,
  UpstreamCallTimeout,
  UpstreamRunLost,
  UpstreamTrace,
  wakeRunPayload,
} from './adapters/index.ts';
export {
  adapterFactories,
  ChannelFileError,
  type ChannelOutcome,
  ChannelRouter,
  loadChannelFile,
  type RunPlacement,
  registeredProviders,
} from './channels/index.ts';
export {
  type GeneratedFile,
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  type Generator,
  GeneratorTransientError,
  GeneratorUnavailable,
  type RunStart,
  type UpstreamCost,
} from './generator.ts';
export {
  type AnySettlement,
  type HelperIO,
  type HelperName,
  isPolledSettlement,
  LIBRARY_WAIT_MS,
  type LibraryGenerator,
  type LibraryPolledSettlement,
  LibraryRejected,
  type LibrarySource,
  type RecordDeletion,
  type SettleAnswer,
} from './library.ts';
export { LibrarySimulator } from './simulator/library-sim.ts';
export { writeOutput } from './simulator/media/index.ts';
export { RenderPool } from './simulator/media/render-pool.ts';
export { hasMarker, SIM_MARKERS, Simulator } from './simulator/simulator.ts';
