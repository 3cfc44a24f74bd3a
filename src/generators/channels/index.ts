export { ChannelFileError, loadChannelFile, PROVIDER_MODELS, parseChannels } from './channel-file.ts';
export {
  ChannelRouter,
  type ChannelRouterDeps,
  type Placement,
  type RunPlacement,
  type RunView,
} from './channel-router.ts';
export {
  type ChannelOutcome,
  ChannelStates,
  type ChannelView,
  CIRCUIT_FAILURES,
  CIRCUIT_OPEN_MS,
  pickByPriorityAndWeight,
} from './channel-states.ts';
export { adapterFactories, registeredProviders } from './registry.ts';
