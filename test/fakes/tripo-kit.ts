/** Shared steps of the Tripo adapter tests: requests from settings, and a run driven to its end. */
import { setTimeout as sleep } from 'node:timers/promises';
import { findModel, validateSettings } from '../../src/catalog/index.ts';
import type { Adapter } from '../../src/generators/adapters/types.ts';
import type { GenerationRequest, GenerationStatus } from '../../src/generators/generator.ts';

/** A model-3d request as the worker builds it: settings checked, defaults filled in, the mode's plan. */
export function request3d(settings: Record<string, unknown>): GenerationRequest {
  const model = findModel('model-3d');
  if (!model) throw new Error('model-3d is missing');
  const checked = validateSettings(model, settings);
  if (!checked.ok) throw new Error(`bad test settings: ${JSON.stringify(checked.violations)}`);
  const inputs = { files: [] };
  return {
    taskId: 'task-1',
    model: 'model-3d',
    mode: checked.mode.name,
    settings: checked.settings,
    inputs,
    plan: checked.mode.plan(checked.settings, inputs),
  };
}

export const RUN = { key: 'task-1/1', startedAt: new Date() };

/** Polls quickly (not every 5 s) until the run ends; every state seen, in order. */
export async function pollToEnd(
  adapter: Adapter,
  handle: string,
  request: GenerationRequest,
): Promise<GenerationStatus[]> {
  const seen: GenerationStatus[] = [];
  for (let i = 0; i < 400; i++) {
    const status = await adapter.status(handle, request, AbortSignal.timeout(10_000));
    seen.push(status);
    if (status.state !== 'running') return seen;
    await sleep(25);
  }
  throw new Error('the run never ended');
}

/** Creates a run and polls it to its end; the handle and the states seen. */
export async function runToEnd(
  adapter: Adapter,
  request: GenerationRequest,
): Promise<{ handle: string; seen: GenerationStatus[] }> {
  const handle = await adapter.create(request, RUN, AbortSignal.timeout(10_000));
  return { handle, seen: await pollToEnd(adapter, handle, request) };
}
