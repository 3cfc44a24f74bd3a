/**
 * The simulator's procedural mesh, shared by the GLB and FBX renderers: a seeded superellipsoid built
 * as a "cube sphere" (six grids of quads, one per cube face) with bumps, per-axis scale and a twist.
 * Quads only, so the FBX writer can keep them and the GLB writer splits each into two triangles.
 */
import { createRng } from './seed.ts';

/** Triangles generated at most, whatever the face limit, so files stay small. */
export const MAX_GENERATED_TRIANGLES = 20_000;

/** One cube face of the mesh: its own vertices (seams are duplicated) and quads wound counter-clockwise. */
export interface ShapePatch {
  /** Cube face 0–5: +X, -X, +Y, -Y, +Z, -Z. */
  face: number;
  positions: Float32Array;
  normals: Float32Array;
  /** Texture atlas coordinates: face `f` uses cell `(f % 3, floor(f / 3))` of a 3×2 grid. */
  uvs: Float32Array;
  /** Four vertex indices per quad. */
  quads: Uint32Array;
}

/** Shape parameters derived from the seed; exported for the preview picture. */
export interface ShapeParams {
  /** Superellipsoid exponent (2 is a sphere, larger is boxier, smaller is pointier). */
  power: number;
  scale: readonly [number, number, number];
  twist: number;
  bumps: readonly { dir: readonly [number, number, number]; amp: number; width: number }[];
  /** Base hue of the model (0–360), shared by materials and previews. */
  hue: number;
}

type Vec3 = [number, number, number];

/** The seed's shape parameters. */
export function shapeParams(seed: string): ShapeParams {
  const rng = createRng(seed, 'shape');
  const power = rng.pick([1.6, 2, 2.5, 3, 4, 5]);
  const scale: [number, number, number] = [rng.range(0.7, 1.2), rng.range(0.7, 1.3), rng.range(0.7, 1.2)];
  const bumps = Array.from({ length: rng.int(2, 6) }, () => {
    const z = rng.range(-1, 1);
    const a = rng.range(0, Math.PI * 2);
    const r = Math.sqrt(1 - z * z);
    const dir: [number, number, number] = [r * Math.cos(a), z, r * Math.sin(a)];
    return { dir, amp: rng.range(-0.15, 0.3), width: rng.range(0.05, 0.3) };
  });
  return { power, scale, twist: rng.range(-0.8, 0.8), bumps, hue: rng.range(0, 360) };
}

/**
 * Segments along the cube's x, y and z edges for a triangle budget (4·(xy + yz + zx) triangles in all).
 * Each cube edge keeps one segment count, so neighbouring faces meet without cracks.
 */
export function gridFor(faceLimit: number): [number, number, number] {
  const budget = Math.min(Math.floor(faceLimit), MAX_GENERATED_TRIANGLES);
  if (budget < 12)
    throw new RangeError(`face limit ${faceLimit} is below the 12 triangles of the coarsest mesh`);
  const triangles = (g: number[]): number => 4 * (g[0]! * g[1]! + g[1]! * g[2]! + g[2]! * g[0]!);
  const n = Math.max(1, Math.floor(Math.sqrt(budget / 12)));
  const grid: [number, number, number] = [n, n, n];
  for (const axis of [0, 1]) {
    const bigger = grid.map((v, i) => (i === axis ? v + 1 : v));
    if (triangles(bigger) <= budget) grid[axis] = bigger[axis]!;
  }
  return grid;
}

const FACE_AXES: readonly (readonly [number, number, number, number])[] = [
  // [normal axis, sign, u axis, v axis]
  [0, 1, 2, 1],
  [0, -1, 2, 1],
  [1, 1, 0, 2],
  [1, -1, 0, 2],
  [2, 1, 0, 1],
  [2, -1, 0, 1],
];

function surfacePoint(params: ShapeParams, face: number, a: number, b: number): Vec3 {
  const [axis, sign, ua, va] = FACE_AXES[face]!;
  const c: Vec3 = [0, 0, 0];
  c[axis] = sign;
  c[ua] = a;
  c[va] = b;
  // Cube-to-sphere mapping with an even spread of vertices.
  const [x, y, z] = c;
  const d: Vec3 = [
    x * Math.sqrt(1 - (y * y) / 2 - (z * z) / 2 + (y * y * z * z) / 3),
    y * Math.sqrt(1 - (z * z) / 2 - (x * x) / 2 + (z * z * x * x) / 3),
    z * Math.sqrt(1 - (x * x) / 2 - (y * y) / 2 + (x * x * y * y) / 3),
  ];
  const p = params.power;
  let r = (Math.abs(d[0]) ** p + Math.abs(d[1]) ** p + Math.abs(d[2]) ** p) ** (-1 / p);
  for (const bump of params.bumps) {
    const dot = d[0] * bump.dir[0] + d[1] * bump.dir[1] + d[2] * bump.dir[2];
    r *= 1 + bump.amp * Math.exp(-(1 - dot) / bump.width);
  }
  const px = d[0] * r * params.scale[0];
  const py = d[1] * r * params.scale[1];
  const pz = d[2] * r * params.scale[2];
  const angle = params.twist * py;
  return [px * Math.cos(angle) - pz * Math.sin(angle), py, px * Math.sin(angle) + pz * Math.cos(angle)];
}

function normalAt(params: ShapeParams, face: number, a: number, b: number, p: Vec3): Vec3 {
  const e = 1e-4;
  const pa = surfacePoint(params, face, a + e, b);
  const pb = surfacePoint(params, face, a, b + e);
  const da = [pa[0] - p[0], pa[1] - p[1], pa[2] - p[2]];
  const db = [pb[0] - p[0], pb[1] - p[1], pb[2] - p[2]];
  let n: Vec3 = [
    da[1]! * db[2]! - da[2]! * db[1]!,
    da[2]! * db[0]! - da[0]! * db[2]!,
    da[0]! * db[1]! - da[1]! * db[0]!,
  ];
  if (n[0] * p[0] + n[1] * p[1] + n[2] * p[2] < 0) n = [-n[0], -n[1], -n[2]];
  const len = Math.hypot(n[0], n[1], n[2]) || 1;
  return [n[0] / len, n[1] / len, n[2] / len];
}

function buildPatch(params: ShapeParams, face: number, grid: readonly number[]): ShapePatch {
  const [, , ua, va] = FACE_AXES[face]!;
  const n = grid[ua]!;
  const m = grid[va]!;
  const count = (n + 1) * (m + 1);
  const positions = new Float32Array(count * 3);
  const normals = new Float32Array(count * 3);
  const uvs = new Float32Array(count * 2);
  const cellU = face % 3;
  const cellV = Math.floor(face / 3);
  const inset = 0.02;
  for (let j = 0; j <= m; j++) {
    for (let i = 0; i <= n; i++) {
      const k = j * (n + 1) + i;
      const a = -1 + (2 * i) / n;
      const b = -1 + (2 * j) / m;
      const p = surfacePoint(params, face, a, b);
      const nn = normalAt(params, face, a, b, p);
      positions.set(p, k * 3);
      normals.set(nn, k * 3);
      uvs[k * 2] = (cellU + inset + ((1 - 2 * inset) * i) / n) / 3;
      uvs[k * 2 + 1] = (cellV + inset + ((1 - 2 * inset) * j) / m) / 2;
    }
  }
  // Winding: counter-clockwise seen from outside, checked on the middle quad of the face.
  const mid = Math.floor(m / 2) * (n + 1) + Math.floor(n / 2);
  const at = (k: number, c: number): number => positions[k * 3 + c]!;
  const e1 = [0, 1, 2].map((c) => at(mid + 1, c) - at(mid, c));
  const e2 = [0, 1, 2].map((c) => at(mid + n + 1, c) - at(mid, c));
  const geo = [
    e1[1]! * e2[2]! - e1[2]! * e2[1]!,
    e1[2]! * e2[0]! - e1[0]! * e2[2]!,
    e1[0]! * e2[1]! - e1[1]! * e2[0]!,
  ];
  const flip =
    geo[0]! * normals[mid * 3]! + geo[1]! * normals[mid * 3 + 1]! + geo[2]! * normals[mid * 3 + 2]! < 0;
  const quads = new Uint32Array(n * m * 4);
  let q = 0;
  for (let j = 0; j < m; j++) {
    for (let i = 0; i < n; i++) {
      const v0 = j * (n + 1) + i;
      const v1 = v0 + 1;
      const v2 = v0 + n + 2;
      const v3 = v0 + n + 1;
      quads.set(flip ? [v0, v3, v2, v1] : [v0, v1, v2, v3], q);
      q += 4;
    }
  }
  return { face, positions, normals, uvs, quads };
}

/** Builds the seed's mesh with at most `faceLimit` triangles (two per quad), capped at 20,000. */
export function buildShape(seed: string, faceLimit: number): ShapePatch[] {
  const params = shapeParams(seed);
  const grid = gridFor(faceLimit);
  return [0, 1, 2, 3, 4, 5].map((face) => buildPatch(params, face, grid));
}

/** Splits the six faces into 2–4 named parts (chosen by the seed). */
export function groupParts(seed: string, patches: ShapePatch[]): { name: string; patches: ShapePatch[] }[] {
  const count = createRng(seed, 'parts').int(2, 4);
  const layouts: Record<number, number[][]> = {
    2: [
      [0, 2, 4],
      [1, 3, 5],
    ],
    3: [
      [0, 1],
      [2, 3],
      [4, 5],
    ],
    4: [[0, 1], [2], [3], [4, 5]],
  };
  const names = ['shell', 'crown', 'base', 'band'];
  return layouts[count]!.map((faces, i) => ({
    name: `${names[i]}_${i + 1}`,
    patches: faces.map((f) => patches[f]!),
  }));
}
