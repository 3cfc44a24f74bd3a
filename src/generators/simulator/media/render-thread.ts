/** Entry of a render thread (see render-pool.ts): writes one planned output to the path it is given. */
import type { OutputPlan } from '../../../catalog/index.ts';
import { writeOutput } from './index.ts';

export interface RenderJob {
  plan: OutputPlan;
  path: string;
}

export default function render(job: RenderJob): Promise<void> {
  return writeOutput(job.plan, job.path);
}
