export {
  CALLBACK_PROVIDERS,
  type CallbackAddress,
  type CallbackOutcome,
  type CallbackProvider,
  CallbackStore,
  type CallbackStoreDeps,
  type ChannelCallbacks,
  calledBackRunOf,
  wakeRunPayload,
} from './callback-store.ts';
export { createCogAdapter } from './cog/index.ts';
export {
  type AdapterRuntime,
  createAdapterDeps,
  createTransport,
  MAX_OUTPUT_BYTES,
  type TransportOptions,
  UPSTREAM_CALL_MS,
  UpstreamTrace,
} from './deps.ts';
export { createElevenLabsAdapter } from './elevenlabs/index.ts';
export { artifactOfLink, type StoredArtifact } from './input-files.ts';
export { createKlingAdapter } from './kling/index.ts';
export { filesForPlan } from './output-files.ts';
export { kindOfOutput, type OutputType, sniffOutput } from './output-type.ts';
export { createRecraftAdapter } from './recraft/index.ts';
export { createSeedanceAdapter } from './seedance/index.ts';
export { createSunoAdapter } from './suno/index.ts';
export { createTripoAdapter } from './tripo/index.ts';
export {
  type Adapter,
  type AdapterDeps,
  type AdapterFactory,
  type Channel,
  ChannelBusy,
  ChannelOutOfCredit,
  type DownloadedOutput,
  type InputBytes,
  isProviderName,
  PROVIDERS,
  type ProviderName,
  type UpstreamArtifact,
  UpstreamCallTimeout,
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
  UpstreamRunLost,
} from './types.ts';
export { retryAfterMs, transientFailure } from './upstream-failure.ts';
