/** Shared steps of the Seedance and Kling adapter tests: requests from settings, runs driven to their end. */
import { setTimeout as sleep } from 'node:timers/promises';
import { findModel, type ModeInputs, validateSettings } from '../../src/catalog/index.ts';
import type { Adapter } from '../../src/generators/adapters/types.ts';
import type { GenerationRequest, GenerationStatus } from '../../src/generators/generator.ts';

/** A request as the worker builds it: settings checked, defaults filled in, the mode's plan. */
export function videoRequest(
  model: string,
  settings: Record<string, unknown>,
  records?: ModeInputs['records'],
): GenerationRequest {
  const spec = findModel(model);
  if (!spec) throw new Error(`${model} is missing`);
  const checked = validateSettings(spec, settings);
  if (!checked.ok) throw new Error(`bad test settings: ${JSON.stringify(checked.violations)}`);
  const inputs: ModeInputs = records === undefined ? { files: [] } : { files: [], records };
  return {
    taskId: 'task-1',
    model,
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
