/**
 * GLB (binary glTF 2.0) renderer: the seed's procedural mesh written with glTF-Transform, with an
 * embedded PNG base-colour texture when textured and metallic/roughness data when PBR.
 */
import { writeFile } from 'node:fs/promises';
import {
  Document,
  type Buffer as GltfBuffer,
  type Material,
  type Mesh,
  NodeIO,
  type TypedArray,
} from '@gltf-transform/core';
import type { MeshOutput } from '../../../catalog/index.ts';
import { drawPicture, encodePng } from './png.ts';
import { createRng, hsl } from './seed.ts';
import { buildShape, groupParts, type ShapePatch, shapeParams } from './shape.ts';

const TEXTURE_SIZE = 256;

/** Draws a small metallic (blue) / roughness (green) map of soft stripes. */
function metallicRoughnessPng(seed: string): Buffer {
  const rng = createRng(seed, 'pbr');
  const size = 64;
  const freq = rng.range(2, 6);
  const rgba = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const k = (y * size + x) * 4;
      const wave = 0.5 + 0.5 * Math.sin(((x + y) / size) * freq * Math.PI);
      rgba[k] = 255;
      rgba[k + 1] = Math.round(80 + 150 * wave);
      rgba[k + 2] = Math.round(255 * (1 - wave));
      rgba[k + 3] = 255;
    }
  }
  return encodePng(size, size, rgba);
}

function createMaterial(doc: Document, plan: MeshOutput): Material {
  const params = shapeParams(plan.seed);
  const rng = createRng(plan.seed, 'material');
  const color = hsl(params.hue, 0.65, 0.55);
  const material = doc
    .createMaterial('surface')
    .setBaseColorFactor(plan.textured ? [1, 1, 1, 1] : [color[0] / 255, color[1] / 255, color[2] / 255, 1])
    .setMetallicFactor(plan.pbr ? rng.range(0.2, 0.9) : 0)
    .setRoughnessFactor(plan.pbr ? rng.range(0.2, 0.8) : 1);
  if (plan.textured) {
    const image = encodePng(TEXTURE_SIZE, TEXTURE_SIZE, drawPicture(TEXTURE_SIZE, TEXTURE_SIZE, plan.seed));
    const texture = doc
      .createTexture('base_color')
      .setImage(image)
      .setMimeType('image/png')
      .setURI('base_color.png');
    material.setBaseColorTexture(texture);
  }
  if (plan.pbr) {
    const texture = doc
      .createTexture('metallic_roughness')
      .setImage(metallicRoughnessPng(plan.seed))
      .setMimeType('image/png')
      .setURI('metallic_roughness.png');
    material.setMetallicRoughnessTexture(texture);
  }
  return material;
}

function createMesh(
  doc: Document,
  buffer: GltfBuffer,
  name: string,
  patches: ShapePatch[],
  material: Material,
  withUv: boolean,
): Mesh {
  const vertexCount = patches.reduce((sum, p) => sum + p.positions.length / 3, 0);
  const quadCount = patches.reduce((sum, p) => sum + p.quads.length / 4, 0);
  const positions = new Float32Array(vertexCount * 3);
  const normals = new Float32Array(vertexCount * 3);
  const uvs = new Float32Array(vertexCount * 2);
  const indices = new Uint32Array(quadCount * 6);
  let v = 0;
  let t = 0;
  for (const patch of patches) {
    positions.set(patch.positions, v * 3);
    normals.set(patch.normals, v * 3);
    uvs.set(patch.uvs, v * 2);
    for (let q = 0; q < patch.quads.length; q += 4) {
      const [a, b, c, d] = [patch.quads[q]!, patch.quads[q + 1]!, patch.quads[q + 2]!, patch.quads[q + 3]!];
      indices.set([a + v, b + v, c + v, a + v, c + v, d + v], t);
      t += 6;
    }
    v += patch.positions.length / 3;
  }
  const accessor = (type: 'VEC3' | 'VEC2' | 'SCALAR', array: TypedArray) =>
    doc.createAccessor().setType(type).setArray(array).setBuffer(buffer);
  const primitive = doc
    .createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', positions))
    .setAttribute('NORMAL', accessor('VEC3', normals))
    .setIndices(accessor('SCALAR', vertexCount > 65535 ? indices : Uint16Array.from(indices)))
    .setMaterial(material);
  if (withUv) primitive.setAttribute('TEXCOORD_0', accessor('VEC2', uvs));
  return doc.createMesh(name).addPrimitive(primitive);
}

/** Builds the GLB bytes of a 3D model plan. */
export async function buildGlb(plan: MeshOutput): Promise<Uint8Array> {
  const doc = new Document();
  doc.getRoot().getAsset().generator = 'generation-task-api simulator';
  const buffer = doc.createBuffer();
  const material = createMaterial(doc, plan);
  const patches = buildShape(plan.seed, plan.faceLimit);
  const groups = plan.parts ? groupParts(plan.seed, patches) : [{ name: 'model', patches }];
  const scene = doc.createScene('scene');
  const root = doc.createNode(plan.parts ? 'model' : 'model_root');
  scene.addChild(root);
  for (const group of groups) {
    const mesh = createMesh(doc, buffer, group.name, group.patches, material, plan.textured);
    root.addChild(doc.createNode(group.name).setMesh(mesh));
  }
  doc.getRoot().setDefaultScene(scene);
  return new NodeIO().writeBinary(doc);
}

/** Writes the GLB of a 3D model plan to `path`. */
export async function renderGlb(plan: MeshOutput, path: string): Promise<void> {
  await writeFile(path, await buildGlb(plan));
}
