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
  type UpstreamHttp,
  type UpstreamRequest,
  type UpstreamResponse,
  UpstreamRunLost,
} from './types.ts';
export { retryAfterMs, transientFailure } from './upstream-failure.ts';
