/**
 * Stand-in AdapterDeps until the real ones (HTTP client, guarded downloads, callbacks) are wired: every
 * call that would reach a provider throws, so a misconfigured process fails its runs loudly instead of
 * pretending. `simulator` channels never call their deps.
 */
import type { Clock } from '../../lib/index.ts';
import type { AdapterDeps, Channel } from '../adapters/types.ts';

export function unwiredAdapterDeps(channel: Channel, clock: Clock): AdapterDeps {
  const unwired = (what: string): never => {
    throw new Error(`channel ${channel.name}: ${what} is not wired in this build`);
  };
  return {
    channel,
    clock,
    http: { request: async () => unwired('the upstream HTTP client') },
    download: async () => unwired('output downloads'),
    publicUrl: (url) => url,
    readInput: async () => unwired('input reads'),
    callbacks: {
      urlFor: () => unwired('callbacks'),
      received: async () => [],
    },
  };
}
