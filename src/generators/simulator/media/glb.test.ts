import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeIO } from '@gltf-transform/core';
import type { MeshOutput } from '../../../catalog/model-spec.ts';
import { buildGlb } from './glb.ts';

function plan(over: Partial<MeshOutput>): MeshOutput {
  return {
    kind: 'document',
    format: 'glb',
    filename: 'model.glb',
    caption: '',
    seed: 'glb seed',
    faceLimit: 1000,
    textured: false,
    pbr: false,
    parts: false,
    ...over,
  };
}

/** The JSON chunk of a GLB container. */
function glbJson(
  bytes: Uint8Array,
): { accessors: { min?: number[]; max?: number[] }[] } & Record<string, unknown> {
  const buf = Buffer.from(bytes);
  assert.equal(buf.toString('latin1', 0, 4), 'glTF');
  assert.equal(buf.readUInt32LE(4), 2);
  assert.equal(buf.readUInt32LE(8), buf.length);
  const length = buf.readUInt32LE(12);
  assert.equal(buf.readUInt32LE(16), 0x4e4f534a);
  return JSON.parse(buf.toString('utf8', 20, 20 + length));
}

async function inspect(bytes: Uint8Array) {
  const doc = await new NodeIO().readBinary(bytes);
  const root = doc.getRoot();
  let triangles = 0;
  let facingOut = 0;
  for (const mesh of root.listMeshes()) {
    for (const primitive of mesh.listPrimitives()) {
      const indices = primitive.getIndices()!.getArray()!;
      const pos = primitive.getAttribute('POSITION')!.getArray()!;
      const nor = primitive.getAttribute('NORMAL')!.getArray()!;
      triangles += indices.length / 3;
      for (let t = 0; t < indices.length; t += 3) {
        const [a, b, c] = [indices[t]!, indices[t + 1]!, indices[t + 2]!];
        const e1 = [0, 1, 2].map((k) => pos[b * 3 + k]! - pos[a * 3 + k]!);
        const e2 = [0, 1, 2].map((k) => pos[c * 3 + k]! - pos[a * 3 + k]!);
        const cross = [
          e1[1]! * e2[2]! - e1[2]! * e2[1]!,
          e1[2]! * e2[0]! - e1[0]! * e2[2]!,
          e1[0]! * e2[1]! - e1[1]! * e2[0]!,
        ];
        const n = [0, 1, 2].map((k) => nor[a * 3 + k]! + nor[b * 3 + k]! + nor[c * 3 + k]!);
        if (cross[0]! * n[0]! + cross[1]! * n[1]! + cross[2]! * n[2]! > 0) facingOut++;
      }
    }
  }
  return { root, triangles, facingOut };
}

describe('GLB renderer', () => {
  for (const faceLimit of [48, 500, 20_000, 2_000_000]) {
    it(`stays within faceLimit ${faceLimit}, close to it, capped at 20,000`, async () => {
      const bytes = await buildGlb(plan({ faceLimit, seed: `limit ${faceLimit}` }));
      const { root, triangles, facingOut } = await inspect(bytes);
      assert.ok(triangles <= faceLimit && triangles <= 20_000, `${triangles} triangles`);
      assert.ok(triangles >= 48 && triangles >= Math.min(faceLimit, 20_000) * 0.85, `${triangles} triangles`);
      assert.ok(
        facingOut >= triangles * 0.95,
        `${facingOut}/${triangles}: ` + 'counter-clockwise winding agrees with the normals',
      );
      assert.equal(root.listTextures().length, 0);
      assert.equal(root.listMeshes().length, 1);
      const primitive = root.listMeshes()[0]!.listPrimitives()[0]!;
      assert.deepEqual(primitive.listSemantics().sort(), ['NORMAL', 'POSITION']);
      const json = glbJson(bytes);
      const position = json.accessors.find((a) => a.min && a.max);
      assert.ok(position && position.min!.length === 3, 'POSITION accessor has min/max');
    });
  }

  it('embeds a PNG base-colour texture and UVs when textured, PBR maps when pbr', async () => {
    const { root } = await inspect(await buildGlb(plan({ textured: true, pbr: true })));
    const material = root.listMaterials()[0]!;
    const texture = material.getBaseColorTexture();
    assert.ok(texture);
    assert.equal(texture.getMimeType(), 'image/png');
    assert.equal(Buffer.from(texture.getImage()!.subarray(1, 4)).toString('latin1'), 'PNG');
    assert.ok(material.getMetallicRoughnessTexture());
    assert.ok(material.getMetallicFactor() > 0);
    const semantics = root.listMeshes()[0]!.listPrimitives()[0]!.listSemantics();
    assert.ok(semantics.includes('TEXCOORD_0'));
    const plain = (await inspect(await buildGlb(plan({ textured: false, pbr: true })))).root;
    assert.equal(plain.listMaterials()[0]!.getBaseColorTexture(), null);
  });

  it('splits the mesh into 2–4 named nodes when parts is set, keeping the face limit', async () => {
    for (const seed of ['a', 'b', 'c', 'd']) {
      const { root, triangles } = await inspect(await buildGlb(plan({ parts: true, seed, faceLimit: 700 })));
      const named = root.listNodes().filter((n) => n.getMesh());
      assert.ok(named.length >= 2 && named.length <= 4, `${named.length} parts`);
      assert.equal(new Set(named.map((n) => n.getName())).size, named.length);
      assert.ok(triangles <= 700);
    }
  });

  it('gives different meshes for different seeds', async () => {
    const a = await buildGlb(plan({ seed: 'one' }));
    const b = await buildGlb(plan({ seed: 'two' }));
    assert.notDeepEqual(Buffer.from(a), Buffer.from(b));
  });
});
