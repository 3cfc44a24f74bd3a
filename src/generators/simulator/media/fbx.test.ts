import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import type { MeshOutput } from '../../../catalog/model-spec.ts';
import { buildFbx } from './fbx.ts';

type Value = number | bigint | boolean | string | Uint8Array | number[] | bigint[];
interface ReadNode {
  name: string;
  props: Value[];
  children: ReadNode[];
}

/** Minimal binary FBX (< 7500) reader: header, node records, typed properties, footer. */
function readFbx(buf: Buffer): { version: number; nodes: ReadNode[] } {
  assert.equal(buf.subarray(0, 23).toString('latin1'), 'Kaydara FBX Binary  \u0000\u001a\u0000');
  const version = buf.readUInt32LE(23);
  const readArray = (at: number, size: number, read: (b: Buffer, o: number) => number | bigint) => {
    const length = buf.readUInt32LE(at);
    const encoding = buf.readUInt32LE(at + 4);
    const stored = buf.readUInt32LE(at + 8);
    const raw = buf.subarray(at + 12, at + 12 + stored);
    const data = encoding === 1 ? inflateSync(raw) : raw;
    assert.equal(data.length, length * size);
    const values = Array.from({ length }, (_, i) => read(data, i * size));
    return { values, next: at + 12 + stored };
  };
  const readNode = (at: number): { node: ReadNode | null; next: number } => {
    const end = buf.readUInt32LE(at);
    const count = buf.readUInt32LE(at + 4);
    const nameLength = buf.readUInt8(at + 12);
    if (end === 0) return { node: null, next: at + 13 };
    const name = buf.subarray(at + 13, at + 13 + nameLength).toString('latin1');
    let p = at + 13 + nameLength;
    const props: Value[] = [];
    for (let i = 0; i < count; i++) {
      const type = String.fromCharCode(buf[p]!);
      p += 1;
      if (type === 'C') props.push(buf[p++] === 1);
      else if (type === 'I') {
        props.push(buf.readInt32LE(p));
        p += 4;
      } else if (type === 'L') {
        props.push(buf.readBigInt64LE(p));
        p += 8;
      } else if (type === 'D') {
        props.push(buf.readDoubleLE(p));
        p += 8;
      } else if (type === 'S' || type === 'R') {
        const length = buf.readUInt32LE(p);
        const bytes = buf.subarray(p + 4, p + 4 + length);
        props.push(type === 'S' ? bytes.toString('utf8') : new Uint8Array(bytes));
        p += 4 + length;
      } else if (type === 'i' || type === 'd') {
        const arr =
          type === 'i'
            ? readArray(p, 4, (b, o) => b.readInt32LE(o))
            : readArray(p, 8, (b, o) => b.readDoubleLE(o));
        props.push(arr.values as number[]);
        p = arr.next;
      } else assert.fail(`unknown property type ${type} in ${name}`);
    }
    const children: ReadNode[] = [];
    while (p < end) {
      const child = readNode(p);
      p = child.next;
      if (!child.node) break;
      children.push(child.node);
    }
    assert.equal(p, end, `node ${name} ends at its end offset`);
    return { node: { name, props, children }, next: end };
  };
  const nodes: ReadNode[] = [];
  let at = 27;
  for (;;) {
    const { node, next } = readNode(at);
    at = next;
    if (!node) break;
    nodes.push(node);
  }
  // Footer: id, 4 zeros, padding to 16, version, 120 zeros, magic.
  assert.equal(buf.subarray(at, at + 16).toString('hex'), 'fabcab09d0c8d466b176fb831cf7267e');
  assert.equal(buf.subarray(buf.length - 16).toString('hex'), 'f85a8c6adef5d97eece90ce3758f290b');
  assert.equal(buf.readUInt32LE(buf.length - 16 - 120 - 4), version);
  assert.equal((buf.length - 16 - 120 - 4) % 16, 0);
  return { version, nodes };
}

const child = (node: ReadNode, name: string): ReadNode => {
  const found = node.children.find((c) => c.name === name);
  assert.ok(found, `${node.name} has ${name}`);
  return found;
};

function plan(over: Partial<MeshOutput>): MeshOutput {
  return {
    kind: 'document',
    format: 'fbx',
    filename: 'model.fbx',
    caption: '',
    seed: 'fbx seed',
    faceLimit: 1000,
    textured: false,
    pbr: false,
    parts: false,
    ...over,
  };
}

describe('FBX renderer', () => {
  for (const faceLimit of [48, 500, 20_000, 2_000_000]) {
    it(`keeps a closed quad mesh within faceLimit ${faceLimit}`, () => {
      const fbx = readFbx(buildFbx(plan({ faceLimit, seed: `limit ${faceLimit}` })));
      assert.equal(fbx.version, 7400);
      const names = fbx.nodes.map((n) => n.name);
      for (const n of ['FBXHeaderExtension', 'GlobalSettings', 'Objects', 'Connections'])
        assert.ok(names.includes(n));
      const objects = fbx.nodes.find((n) => n.name === 'Objects')!;
      const geometries = objects.children.filter((c) => c.name === 'Geometry');
      assert.equal(geometries.length, 1);
      const geometry = geometries[0]!;
      const vertices = child(geometry, 'Vertices').props[0] as number[];
      const index = child(geometry, 'PolygonVertexIndex').props[0] as number[];
      const vertexCount = vertices.length / 3;
      assert.ok(vertexCount >= 8);
      let polygons = 0;
      let triangles = 0;
      let corners = 0;
      const edges = new Set<string>();
      let first = 0;
      index.forEach((raw, i) => {
        const v = raw < 0 ? -raw - 1 : raw;
        assert.ok(v < vertexCount);
        corners++;
        if (raw < 0) {
          polygons++;
          triangles += corners - 2;
          assert.equal(corners, 4, 'quads');
          for (let c = first; c <= i; c++) {
            const a = index[c]! < 0 ? -index[c]! - 1 : index[c]!;
            const nextRaw = c === i ? index[first]! : index[c + 1]!;
            const b = nextRaw < 0 ? -nextRaw - 1 : nextRaw;
            const key = `${a}>${b}`;
            assert.ok(!edges.has(key), 'each directed edge once (consistent winding)');
            edges.add(key);
          }
          corners = 0;
          first = i + 1;
        }
      });
      for (const key of edges) assert.ok(edges.has(key.split('>').reverse().join('>')), 'closed surface');
      assert.ok(triangles <= faceLimit, `${triangles} <= ${faceLimit}`);
      assert.ok(triangles >= Math.min(faceLimit, 20_000) * 0.8 || triangles >= 48, `${triangles} near limit`);
      assert.ok(triangles <= 20_000);
      assert.equal(polygons * 4, index.length);
      const normals = child(child(geometry, 'LayerElementNormal'), 'Normals').props[0] as number[];
      assert.equal(normals.length, index.length * 3);
      const model = objects.children.find((c) => c.name === 'Model')!;
      assert.equal((model.props[1] as string).split('\u0000\u0001')[1], 'Model');
      const links = fbx.nodes.find((n) => n.name === 'Connections')!.children;
      assert.ok(links.some((c) => c.props[1] === geometry.props[0] && c.props[2] === model.props[0]));
      assert.ok(links.some((c) => c.props[1] === model.props[0] && c.props[2] === 0n));
    });
  }

  it('splits parts into several models and embeds a texture when textured', () => {
    const fbx = readFbx(buildFbx(plan({ parts: true, textured: true, faceLimit: 3000 })));
    const objects = fbx.nodes.find((n) => n.name === 'Objects')!;
    const models = objects.children.filter((c) => c.name === 'Model');
    assert.ok(models.length >= 2 && models.length <= 4);
    let triangles = 0;
    for (const geometry of objects.children.filter((c) => c.name === 'Geometry')) {
      triangles += ((child(geometry, 'PolygonVertexIndex').props[0] as number[]).length / 4) * 2;
    }
    assert.ok(triangles <= 3000);
    const video = objects.children.find((c) => c.name === 'Video')!;
    const png = child(video, 'Content').props[0] as Uint8Array;
    assert.equal(Buffer.from(png.subarray(1, 4)).toString('latin1'), 'PNG');
  });

  it('is deterministic per seed and differs across seeds', () => {
    assert.deepEqual(buildFbx(plan({})), buildFbx(plan({})));
    assert.notDeepEqual(buildFbx(plan({})), buildFbx(plan({ seed: 'another' })));
  });
});
