/**
 * Upload a picture, turn it into a 3D model and save the GLB:
 *   GTA_API_KEY=… node sdk/examples/upload-and-run.ts photo.png out.glb
 * Compiled by the project's `npm run typecheck` (strict), so it follows the generated types.
 */
import { readFile, writeFile } from 'node:fs/promises';
import {
  ApiError,
  Client,
  type SettingsModel3DImageToModel,
  type Task,
  TaskFailedError,
  type Upload,
} from '../src/index.ts';

async function main(picture: string, output: string): Promise<void> {
  const c = new Client({
    apiKey: process.env.GTA_API_KEY ?? '',
    baseUrl: process.env.GTA_BASE_URL ?? 'http://localhost:8080',
  });
  const upload: Upload = await c.files.upload(await readFile(picture), { filename: picture });
  const settings: SettingsModel3DImageToModel = { task_type: 'image_to_model', image_url: [upload.url] };
  const price = await c.price({ model: 'model-3d', settings });
  console.log(`price: ${(price.amount_minor / 100).toFixed(2)} ${price.currency}`);
  const task: Task = await c.tasks.run(
    { model: 'model-3d', settings },
    { onUpdate: (state) => console.log(`${state.status} ${state.progress}%`) },
  );
  const glb = task.result?.artifacts.find((artifact) => artifact.filename.endsWith('.glb'));
  if (!glb) throw new Error('no GLB in the result');
  await writeFile(output, await c.tasks.download(task.id, glb.index));
  console.log(`saved ${output} (${glb.size} bytes)`);
}

main(process.argv[2] ?? 'photo.png', process.argv[3] ?? 'model.glb').catch((error: unknown) => {
  if (error instanceof TaskFailedError)
    console.error(`task ${error.task.id} ${error.task.status}: ${error.code}`);
  else if (error instanceof ApiError)
    console.error(`${error.status} ${error.code}: ${error.message} (${error.requestId})`);
  else console.error(error);
  process.exitCode = 1;
});
