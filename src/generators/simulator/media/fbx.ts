/**
 * FBX renderer: the seed's procedural mesh (the GLB's shape family) as a binary FBX 7.4 scene with
 * quad polygons, welded control points, per-corner normals and UVs, a material and, when textured, an
 * embedded PNG texture.
 */
import { writeFile } from 'node:fs/promises';
import type { MeshOutput } from '../../../catalog/index.ts';
import { encodeFbx, FBX_VERSION, type FbxNode, fbxNode, fbxProperty70, P } from './fbx-binary.ts';
import { drawPicture, encodePng } from './png.ts';
import { hsl } from './seed.ts';
import { buildShape, groupParts, type ShapePatch, shapeParams } from './shape.ts';

const TEXTURE_SIZE = 256;
// Creation time and file id pair as Blender writes them (the SDK checks them against each other).
const CREATION_TIME = '1970-01-01 10:00:00:000';
const FILE_ID = Buffer.from('28b32aebb624ccc2bfc8b02aa92bfcf1', 'hex');
const name = (object: string, cls: string): string => `${object}\u0000\u0001${cls}`;

/** Geometry node of a group of patches: welded control points, quads, normals, UVs. */
function geometryNode(id: bigint, label: string, patches: ShapePatch[]): FbxNode {
  const points: number[] = [];
  const weld = new Map<string, number>();
  const polygon: number[] = [];
  const normals: number[] = [];
  const uvs: number[] = [];
  const uvIndex: number[] = [];
  for (const patch of patches) {
    const uvBase = uvs.length / 2;
    const remap = new Int32Array(patch.positions.length / 3);
    for (let v = 0; v < remap.length; v++) {
      const xyz = [patch.positions[v * 3]!, patch.positions[v * 3 + 1]!, patch.positions[v * 3 + 2]!];
      const key = xyz.map((c) => c.toFixed(5)).join(',');
      let index = weld.get(key);
      if (index === undefined) {
        index = points.length / 3;
        weld.set(key, index);
        points.push(...xyz);
      }
      remap[v] = index;
      uvs.push(patch.uvs[v * 2]!, patch.uvs[v * 2 + 1]!);
    }
    for (let q = 0; q < patch.quads.length; q += 4) {
      for (let c = 0; c < 4; c++) {
        const v = patch.quads[q + c]!;
        // The last corner of each polygon is stored as -(index + 1).
        polygon.push(c === 3 ? -remap[v]! - 1 : remap[v]!);
        normals.push(patch.normals[v * 3]!, patch.normals[v * 3 + 1]!, patch.normals[v * 3 + 2]!);
        uvIndex.push(uvBase + v);
      }
    }
  }
  const layerElement = (type: string) =>
    fbxNode('LayerElement', [], [fbxNode('Type', [P.str(type)]), fbxNode('TypedIndex', [P.int(0)])]);
  return fbxNode(
    'Geometry',
    [P.long(id), P.str(name(label, 'Geometry')), P.str('Mesh')],
    [
      fbxNode('Properties70'),
      fbxNode('GeometryVersion', [P.int(124)]),
      fbxNode('Vertices', [P.doubles(Float64Array.from(points))]),
      fbxNode('PolygonVertexIndex', [P.ints(Int32Array.from(polygon))]),
      fbxNode(
        'LayerElementNormal',
        [P.int(0)],
        [
          fbxNode('Version', [P.int(101)]),
          fbxNode('Name', [P.str('')]),
          fbxNode('MappingInformationType', [P.str('ByPolygonVertex')]),
          fbxNode('ReferenceInformationType', [P.str('Direct')]),
          fbxNode('Normals', [P.doubles(Float64Array.from(normals))]),
        ],
      ),
      fbxNode(
        'LayerElementUV',
        [P.int(0)],
        [
          fbxNode('Version', [P.int(101)]),
          fbxNode('Name', [P.str('UVMap')]),
          fbxNode('MappingInformationType', [P.str('ByPolygonVertex')]),
          fbxNode('ReferenceInformationType', [P.str('IndexToDirect')]),
          fbxNode('UV', [P.doubles(Float64Array.from(uvs))]),
          fbxNode('UVIndex', [P.ints(Int32Array.from(uvIndex))]),
        ],
      ),
      fbxNode(
        'LayerElementMaterial',
        [P.int(0)],
        [
          fbxNode('Version', [P.int(101)]),
          fbxNode('Name', [P.str('')]),
          fbxNode('MappingInformationType', [P.str('AllSame')]),
          fbxNode('ReferenceInformationType', [P.str('IndexToDirect')]),
          fbxNode('Materials', [P.ints(Int32Array.of(0))]),
        ],
      ),
      fbxNode(
        'Layer',
        [P.int(0)],
        [
          fbxNode('Version', [P.int(100)]),
          layerElement('LayerElementNormal'),
          layerElement('LayerElementMaterial'),
          layerElement('LayerElementUV'),
        ],
      ),
    ],
  );
}

function modelNode(id: bigint, label: string): FbxNode {
  return fbxNode(
    'Model',
    [P.long(id), P.str(name(label, 'Model')), P.str('Mesh')],
    [
      fbxNode('Version', [P.int(232)]),
      fbxNode('Properties70', [], [fbxProperty70('DefaultAttributeIndex', 'int', 'Integer', '', P.int(0))]),
      fbxNode('MultiLayer', [P.int(0)]),
      fbxNode('MultiTake', [P.int(0)]),
      fbxNode('Shading', [P.bool(true)]),
      fbxNode('Culling', [P.str('CullingOff')]),
    ],
  );
}

function materialNode(id: bigint, plan: MeshOutput): FbxNode {
  const color = hsl(shapeParams(plan.seed).hue, 0.65, 0.55).map((c) => c / 255);
  const rgb = (key: string, values: number[]) =>
    fbxProperty70(key, 'Color', '', 'A', ...values.map(P.double));
  return fbxNode(
    'Material',
    [P.long(id), P.str(name('surface', 'Material')), P.str('')],
    [
      fbxNode('Version', [P.int(102)]),
      fbxNode('ShadingModel', [P.str('Phong')]),
      fbxNode('MultiLayer', [P.int(0)]),
      fbxNode(
        'Properties70',
        [],
        [
          rgb('DiffuseColor', plan.textured ? [1, 1, 1] : color),
          fbxProperty70('DiffuseFactor', 'Number', '', 'A', P.double(1)),
          fbxProperty70('Shininess', 'Number', '', 'A', P.double(plan.pbr ? 60 : 20)),
        ],
      ),
    ],
  );
}

function textureNodes(textureId: bigint, videoId: bigint, seed: string): FbxNode[] {
  const file = 'base_color.png';
  const png = encodePng(TEXTURE_SIZE, TEXTURE_SIZE, drawPicture(TEXTURE_SIZE, TEXTURE_SIZE, seed));
  const video = fbxNode(
    'Video',
    [P.long(videoId), P.str(name('base_color', 'Video')), P.str('Clip')],
    [
      fbxNode('Type', [P.str('Clip')]),
      fbxNode('Properties70', [], [fbxProperty70('Path', 'KString', 'XRefUrl', '', P.str(file))]),
      fbxNode('UseMipMap', [P.int(0)]),
      fbxNode('Filename', [P.str(file)]),
      fbxNode('RelativeFilename', [P.str(file)]),
      fbxNode('Content', [P.raw(png)]),
    ],
  );
  const texture = fbxNode(
    'Texture',
    [P.long(textureId), P.str(name('base_color', 'Texture')), P.str('')],
    [
      fbxNode('Type', [P.str('TextureVideoClip')]),
      fbxNode('Version', [P.int(202)]),
      fbxNode('TextureName', [P.str(name('base_color', 'Texture'))]),
      fbxNode('Media', [P.str(name('base_color', 'Video'))]),
      fbxNode('FileName', [P.str(file)]),
      fbxNode('RelativeFilename', [P.str(file)]),
      fbxNode('ModelUVTranslation', [P.double(0), P.double(0)]),
      fbxNode('ModelUVScaling', [P.double(1), P.double(1)]),
      fbxNode('Texture_Alpha_Source', [P.str('None')]),
      fbxNode('Cropping', [P.int(0), P.int(0), P.int(0), P.int(0)]),
    ],
  );
  return [video, texture];
}

function headerNodes(): FbxNode[] {
  const stamp = [
    ['Version', 1000],
    ['Year', 1970],
    ['Month', 1],
    ['Day', 1],
    ['Hour', 10],
    ['Minute', 0],
    ['Second', 0],
    ['Millisecond', 0],
  ] as const;
  const creator = 'generation-task-api simulator';
  const axis = (key: string, value: number) => fbxProperty70(key, 'int', 'Integer', '', P.int(value));
  const unit = (key: string) => fbxProperty70(key, 'double', 'Number', '', P.double(100));
  return [
    fbxNode(
      'FBXHeaderExtension',
      [],
      [
        fbxNode('FBXHeaderVersion', [P.int(1003)]),
        fbxNode('FBXVersion', [P.int(FBX_VERSION)]),
        fbxNode('EncryptionType', [P.int(0)]),
        fbxNode(
          'CreationTimeStamp',
          [],
          stamp.map(([key, value]) => fbxNode(key, [P.int(value)])),
        ),
        fbxNode('Creator', [P.str(creator)]),
      ],
    ),
    fbxNode('FileId', [P.raw(FILE_ID)]),
    fbxNode('CreationTime', [P.str(CREATION_TIME)]),
    fbxNode('Creator', [P.str(creator)]),
    fbxNode(
      'GlobalSettings',
      [],
      [
        fbxNode('Version', [P.int(1000)]),
        fbxNode(
          'Properties70',
          [],
          [
            axis('UpAxis', 1),
            axis('UpAxisSign', 1),
            axis('FrontAxis', 2),
            axis('FrontAxisSign', 1),
            axis('CoordAxis', 0),
            axis('CoordAxisSign', 1),
            axis('OriginalUpAxis', 1),
            axis('OriginalUpAxisSign', 1),
            unit('UnitScaleFactor'),
            unit('OriginalUnitScaleFactor'),
          ],
        ),
      ],
    ),
  ];
}

/** Builds the binary FBX 7.4 bytes of a 3D model plan. */
export function buildFbx(plan: MeshOutput): Buffer {
  const patches = buildShape(plan.seed, plan.faceLimit);
  const groups = plan.parts ? groupParts(plan.seed, patches) : [{ name: 'model', patches }];
  let nextId = 1_000_000n;
  const id = (): bigint => nextId++;
  const materialId = id();
  const objects: FbxNode[] = [materialNode(materialId, plan)];
  const connections: FbxNode[] = [];
  const connect = (kind: 'OO' | 'OP', child: bigint, parent: bigint, property?: string) =>
    connections.push(
      fbxNode('C', [P.str(kind), P.long(child), P.long(parent), ...(property ? [P.str(property)] : [])]),
    );
  for (const group of groups) {
    const modelId = id();
    const geometryId = id();
    objects.push(modelNode(modelId, group.name), geometryNode(geometryId, group.name, group.patches));
    connect('OO', modelId, 0n);
    connect('OO', geometryId, modelId);
    connect('OO', materialId, modelId);
  }
  if (plan.textured) {
    const textureId = id();
    const videoId = id();
    objects.push(...textureNodes(textureId, videoId, plan.seed));
    connect('OP', textureId, materialId, 'DiffuseColor');
    connect('OO', videoId, textureId);
  }
  const definition = (type: string, count: number) =>
    fbxNode('ObjectType', [P.str(type)], [fbxNode('Count', [P.int(count)])]);
  const definitions = [
    definition('GlobalSettings', 1),
    definition('Model', groups.length),
    definition('Geometry', groups.length),
    definition('Material', 1),
    ...(plan.textured ? [definition('Texture', 1), definition('Video', 1)] : []),
  ];
  const total = 2 + groups.length * 2 + (plan.textured ? 2 : 0);
  return encodeFbx([
    ...headerNodes(),
    fbxNode(
      'Documents',
      [],
      [
        fbxNode('Count', [P.int(1)]),
        fbxNode('Document', [P.long(id()), P.str(''), P.str('Scene')], [fbxNode('RootNode', [P.long(0n)])]),
      ],
    ),
    fbxNode('References'),
    fbxNode(
      'Definitions',
      [],
      [fbxNode('Version', [P.int(100)]), fbxNode('Count', [P.int(total)]), ...definitions],
    ),
    fbxNode('Objects', [], objects),
    fbxNode('Connections', [], connections),
  ]);
}

/** Writes the FBX of a 3D model plan to `path`. */
export async function renderFbx(plan: MeshOutput, path: string): Promise<void> {
  await writeFile(path, buildFbx(plan));
}
