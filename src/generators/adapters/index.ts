export {
  type Adapter,
  type AdapterDeps,
  type AdapterFactory,
  type Channel,
  ChannelOutOfCredit,
  type DownloadedOutput,
  type InputBytes,
  PROVIDERS,
  type ProviderName,
  type UpstreamArtifact,
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
} from './types.ts';
export { retryAfterMs, transientFailure } from './upstream-failure.ts';
export { createSunoAdapter } from './suno/index.ts';
