/**
 * PNG pictures drawn procedurally from the seed: gradients, soft discs and rings for image plans, and a
 * shaded view of the seed's superellipsoid for the preview of a 3D model.
 */
import { writeFile } from 'node:fs/promises';
import { PNG } from 'pngjs';
import type { ImageOutput } from '../../../catalog/index.ts';
import { createRng, hsl, type Rgb } from './seed.ts';
import { shapeParams } from './shape.ts';

/** Encodes RGBA pixels (4 bytes each, row by row) as a PNG file. */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  const png = new PNG({ width, height });
  png.data = Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength);
  return PNG.sync.write(png, { colorType: 6 });
}

interface Disc {
  x: number;
  y: number;
  r: number;
  ring: boolean;
  color: Rgb;
  alpha: number;
}

function mix(a: number, b: number, t: number): number {
  return a + (b - a) * t;
}

/** Draws the seed's abstract picture as RGBA pixels. */
export function drawPicture(width: number, height: number, seed: string): Uint8Array {
  const rng = createRng(seed, 'picture');
  const hue = rng.range(0, 360);
  const from = hsl(hue, rng.range(0.5, 0.9), rng.range(0.15, 0.35));
  const to = hsl((hue + rng.range(60, 200)) % 360, rng.range(0.5, 0.9), rng.range(0.55, 0.8));
  const angle = rng.range(0, Math.PI * 2);
  const [ax, ay] = [Math.cos(angle), Math.sin(angle)];
  const waveFreq = rng.range(4, 14);
  const size = Math.min(width, height);
  const discs: Disc[] = Array.from({ length: rng.int(4, 9) }, () => ({
    x: rng.range(0, width),
    y: rng.range(0, height),
    r: rng.range(0.06, 0.3) * size,
    ring: rng.next() < 0.35,
    color: hsl((hue + rng.range(-90, 180) + 360) % 360, rng.range(0.6, 1), rng.range(0.4, 0.75)),
    alpha: rng.range(0.45, 0.9),
  }));
  const out = new Uint8Array(width * height * 4);
  const edge = Math.max(1.5, size / 200);
  for (let y = 0; y < height; y++) {
    const ny = y / height - 0.5;
    for (let x = 0; x < width; x++) {
      const nx = x / width - 0.5;
      const t = Math.min(1, Math.max(0, 0.5 + (nx * ax + ny * ay) * 1.2));
      const wave = 0.06 * Math.sin((nx * ay - ny * ax) * waveFreq * Math.PI);
      let r = mix(from[0], to[0], t) * (1 + wave);
      let g = mix(from[1], to[1], t) * (1 + wave);
      let b = mix(from[2], to[2], t) * (1 + wave);
      for (const d of discs) {
        const dist = Math.hypot(x - d.x, y - d.y);
        const inside = d.ring ? d.r * 0.12 - Math.abs(dist - d.r * 0.85) : d.r - dist;
        if (inside <= -edge) continue;
        const a = d.alpha * Math.min(1, (inside + edge) / (2 * edge));
        const shade = d.ring ? 1 : 1.15 - (0.35 * dist) / d.r;
        r = mix(r, d.color[0] * shade, a);
        g = mix(g, d.color[1] * shade, a);
        b = mix(b, d.color[2] * shade, a);
      }
      const vignette = 1 - 0.5 * (nx * nx + ny * ny);
      const k = (y * width + x) * 4;
      out[k] = Math.min(255, Math.max(0, r * vignette));
      out[k + 1] = Math.min(255, Math.max(0, g * vignette));
      out[k + 2] = Math.min(255, Math.max(0, b * vignette));
      out[k + 3] = 255;
    }
  }
  return out;
}

/** Draws a shaded view of the seed's superellipsoid (the 3D model's preview) as RGBA pixels. */
export function drawMeshPreview(width: number, height: number, seed: string): Uint8Array {
  const params = shapeParams(seed);
  const base = hsl(params.hue, 0.65, 0.5);
  const p = params.power;
  const [sx, sy] = params.scale;
  const half = Math.min(width, height) * 0.36;
  const light = [-0.45, 0.6, 0.66];
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const k = (y * width + x) * 4;
      const gx = (x - width / 2) / half / sx;
      const gy = (height / 2 - y) / half / sy;
      const rest = 1 - Math.abs(gx) ** p - Math.abs(gy) ** p;
      // Background: vertical gradient with a soft floor shadow.
      const shadow = Math.exp(
        -(((x - width / 2) / (half * 1.1)) ** 2 + ((y - height * 0.88) / (half * 0.15)) ** 2),
      );
      let c: [number, number, number] = [
        (40 + 40 * (y / height)) * (1 - 0.5 * shadow),
        (44 + 46 * (y / height)) * (1 - 0.5 * shadow),
        (56 + 60 * (y / height)) * (1 - 0.5 * shadow),
      ];
      if (rest > 0) {
        const gz = rest ** (1 / p);
        // Gradient of |x|^p + |y|^p + |z|^p, scaled back to screen space.
        const n = [
          (Math.sign(gx) * Math.abs(gx) ** (p - 1)) / sx,
          (Math.sign(gy) * Math.abs(gy) ** (p - 1)) / sy,
          gz ** (p - 1),
        ];
        const len = Math.hypot(n[0]!, n[1]!, n[2]!) || 1;
        const dot = (n[0]! * light[0]! + n[1]! * light[1]! + n[2]! * light[2]!) / len;
        const diffuse = 0.25 + 0.75 * Math.max(0, dot);
        const spec = Math.max(0, dot) ** 24 * 120;
        c = [base[0] * diffuse + spec, base[1] * diffuse + spec, base[2] * diffuse + spec];
      }
      out[k] = Math.min(255, c[0]);
      out[k + 1] = Math.min(255, c[1]);
      out[k + 2] = Math.min(255, c[2]);
      out[k + 3] = 255;
    }
  }
  return out;
}

/** Writes the PNG of an image plan to `path`. */
export async function renderPng(plan: ImageOutput, path: string): Promise<void> {
  await writeFile(path, encodePng(plan.width, plan.height, drawPicture(plan.width, plan.height, plan.seed)));
}

/** Writes a `width`×`height` PNG preview of the mesh planned from `seed` (a shaded view of that shape). */
export async function renderMeshPreviewPng(
  seed: string,
  width: number,
  height: number,
  path: string,
): Promise<void> {
  await writeFile(path, encodePng(width, height, drawMeshPreview(width, height, seed)));
}
