export {
  artifactOfTaskInput,
  findOwnArtifact,
  type OwnArtifact,
} from './artifact-inputs.ts';
export { type ArtifactUpstream, artifactUpstream, parseArtifactUpstream } from './artifact-upstream.ts';
export { openArtifact, parseRange } from './artifacts.ts';
export { DownloadAllowance } from './download-budget.ts';
export { FinalTaskViews } from './final-task-views.ts';
export {
  type CompleteClaim,
  IDEMPOTENCY_KEY_PATTERN,
  IdempotencyStore,
  parseIdempotencyKey,
} from './idempotency.ts';
export { type ProbeBudget, probeUrl, resolveInputs } from './inputs.ts';
export { TASK_CHANGED_CHANNEL, taskChanged } from './task-events.ts';
export { TaskService } from './task-service.ts';
export type { TaskView } from './task-view.ts';
export { TaskSubscription, TaskWatch, type TaskWatchOptions, type WatchedState } from './task-watch.ts';
export {
  isFinal,
  markFailed,
  markRunning,
  markRunningTogether,
  markSucceeded,
  markSucceededTogether,
  type RunStarting,
  type RunSuccess,
  recordProgress,
  recordRunKey,
  runKeyOf,
  type Success,
  saveHandle,
  saveHandleTogether,
  TASKS_CHANNEL,
} from './transitions.ts';
