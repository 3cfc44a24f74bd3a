/**
 * The Generator port: how the worker drives a generation server. Real providers implement it as an
 * adapter (create a job, poll it, fetch its files, cancel it); the built-in simulator implements it
 * offline. Every call takes an AbortSignal so cancel and shutdown reach the provider.
 */
import type { ArtifactKind, GenerationPlan, ModeInputs } from '../catalog/index.ts';
import type { TaskFailureCode } from '../errors.ts';

export interface GenerationRequest {
  taskId: string;
  model: string;
  mode: string;
  settings: Readonly<Record<string, unknown>>;
  inputs: ModeInputs;
  plan: GenerationPlan;
}

/** State of a run at the generator. */
export type GenerationStatus =
  | { state: 'running'; progress: number /** When to ask again (milliseconds). */; pollAfterMs: number }
  | { state: 'succeeded' }
  | { state: 'failed'; code: TaskFailureCode; reason: string };

/** One result file written by the generator into the worker's folder. */
export interface GeneratedFile {
  path: string;
  kind: ArtifactKind;
  filename: string;
  contentType: string;
  sizeBytes: number;
  caption: string;
}

export interface GenerationOutputs {
  files: GeneratedFile[];
  caption: string;
  texts: string[];
}

/** A refusal or failure the generator reports about the content or the inputs (not our bug). */
export class GenerationError extends Error {
  override name = 'GenerationError';
  readonly code: TaskFailureCode;
  constructor(code: TaskFailureCode, reason: string) {
    super(reason);
    this.code = code;
  }
}

/** The generation server cannot be reached; callers answer 503 sg_unavailable. */
export class GeneratorUnavailable extends Error {
  override name = 'GeneratorUnavailable';
}

export interface Generator {
  /**
   * Checks at acceptance that the generation server can take the request; throws GeneratorUnavailable
   * when it cannot (the task is then not created and nothing is held).
   */
  ensureAvailable(
    request: { model: string; settings: Readonly<Record<string, unknown>> },
    signal?: AbortSignal,
  ): Promise<void>;
  /** Starts a run; returns the provider's handle, stored with the task so a restart resumes it. */
  create(request: GenerationRequest, signal: AbortSignal): Promise<string>;
  /** Polls a run. */
  status(handle: string, request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus>;
  /** Downloads the result files of a finished run into `dir`. */
  outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs>;
  /** Asks the provider to stop a run; best effort. */
  cancel(handle: string, signal: AbortSignal): Promise<void>;
}
