/**
 * Result files of the Tripo fake: a real GLB (or FBX with quad) and a PNG preview drawn by the simulator's
 * renderers, kept small so tests stay quick, plus the broken variants its faults ask for.
 */
import type { MeshOutput } from '../../src/catalog/index.ts';
import { buildFbx } from '../../src/generators/simulator/media/fbx.ts';
import { buildGlb } from '../../src/generators/simulator/media/glb.ts';
import { drawMeshPreview, encodePng } from '../../src/generators/simulator/media/png.ts';

/** What a finished task's files look like. */
export type OutputFault =
  /** The model link serves a PNG. */
  | 'wrong_type'
  /** The model link serves `bigBytes` of zeros. */
  | 'too_big'
  /** `output` has no model link at all. */
  | 'no_model'
  /** `output` has no rendered_image. */
  | 'no_preview';

/** One file the fake serves. */
export interface FakeFile {
  bytes: Uint8Array;
  contentType: string;
  /** Extension of its link. */
  ext: string;
}

/** The files of one succeeded task, by output key (`pbr_model`, `model`, `rendered_image`). */
export async function buildOutputs(
  task: { id: string; body: Readonly<Record<string, unknown>> },
  fault: OutputFault | null,
  bigBytes: number,
): Promise<Map<string, FakeFile>> {
  const body = task.body;
  const quad = body['quad'] === true;
  const parts = body['generate_parts'] === true;
  const pbr = !quad && !parts && body['pbr'] !== false;
  const mesh: MeshOutput = {
    kind: 'document',
    format: quad ? 'fbx' : 'glb',
    filename: quad ? 'model.fbx' : 'model.glb',
    caption: '',
    seed: task.id,
    faceLimit: 200,
    textured: pbr || body['texture'] !== false,
    pbr,
    parts,
  };
  const preview: FakeFile = {
    bytes: encodePng(64, 64, drawMeshPreview(64, 64, task.id)),
    contentType: 'image/png',
    ext: 'png',
  };
  let model: FakeFile = quad
    ? { bytes: buildFbx(mesh), contentType: 'application/octet-stream', ext: 'fbx' }
    : { bytes: await buildGlb(mesh), contentType: 'model/gltf-binary', ext: 'glb' };
  if (fault === 'wrong_type') model = { ...preview, ext: model.ext };
  if (fault === 'too_big')
    model = { bytes: new Uint8Array(bigBytes), contentType: model.contentType, ext: model.ext };
  const files = new Map<string, FakeFile>();
  if (fault !== 'no_model') files.set(pbr ? 'pbr_model' : 'model', model);
  if (fault !== 'no_preview') files.set('rendered_image', preview);
  return files;
}
