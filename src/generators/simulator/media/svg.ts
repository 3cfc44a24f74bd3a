/**
 * SVG renderer: a seeded abstract composition (gradient background, circles, rotated rectangles,
 * polygons and a wave) as a well-formed standalone SVG document.
 */
import { writeFile } from 'node:fs/promises';
import type { ImageOutput } from '../../../catalog/index.ts';
import { createRng, hex, hsl } from './seed.ts';

const round = (value: number): string => String(Math.round(value * 100) / 100);

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Builds the SVG document of an image plan. */
export function buildSvg(plan: ImageOutput): string {
  const { width, height } = plan;
  const rng = createRng(plan.seed, 'svg');
  const hue = rng.range(0, 360);
  const size = Math.min(width, height);
  const color = (shift: number, light: number): string =>
    hex(hsl((hue + shift + 360) % 360, rng.range(0.55, 0.95), light));
  const shapes: string[] = [];
  const count = rng.int(6, 12);
  for (let i = 0; i < count; i++) {
    const x = rng.range(0, width);
    const y = rng.range(0, height);
    const r = rng.range(0.05, 0.22) * size;
    const fill = color(rng.range(-60, 200), rng.range(0.45, 0.75));
    const opacity = round(rng.range(0.45, 0.9));
    const kind = rng.pick(['circle', 'rect', 'polygon', 'ring'] as const);
    if (kind === 'circle') {
      shapes.push(
        `<circle cx="${round(x)}" cy="${round(y)}" r="${round(r)}" fill="${fill}" opacity="${opacity}"/>`,
      );
    } else if (kind === 'ring') {
      shapes.push(
        `<circle cx="${round(x)}" cy="${round(y)}" r="${round(r)}" fill="none" stroke="${fill}" ` +
          `stroke-width="${round(r * 0.2)}" opacity="${opacity}"/>`,
      );
    } else if (kind === 'rect') {
      const angle = round(rng.range(0, 90));
      shapes.push(
        `<rect x="${round(x - r)}" y="${round(y - r * 0.6)}" width="${round(r * 2)}" height="${round(r * 1.2)}" ` +
          `rx="${round(r * 0.15)}" fill="${fill}" opacity="${opacity}" ` +
          `transform="rotate(${angle} ${round(x)} ${round(y)})"/>`,
      );
    } else {
      const corners = rng.int(3, 7);
      const turn = rng.range(0, Math.PI);
      const points = Array.from({ length: corners }, (_, k) => {
        const a = turn + (k / corners) * Math.PI * 2;
        return `${round(x + r * Math.cos(a))},${round(y + r * Math.sin(a))}`;
      }).join(' ');
      shapes.push(`<polygon points="${points}" fill="${fill}" opacity="${opacity}"/>`);
    }
  }
  const waveY = rng.range(0.55, 0.85) * height;
  const amplitude = rng.range(0.03, 0.1) * height;
  const periods = rng.int(1, 4);
  const steps = 48;
  const wave = Array.from({ length: steps + 1 }, (_, k) => {
    const x = (k / steps) * width;
    const y = waveY + amplitude * Math.sin((k / steps) * periods * Math.PI * 2);
    return `${k === 0 ? 'M' : 'L'}${round(x)} ${round(y)}`;
  }).join(' ');
  const angle = rng.range(0, 1);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${escapeXml(plan.caption || plan.filename)}</title>`,
    '<defs>',
    `<linearGradient id="bg" x1="0" y1="0" x2="${round(angle)}" y2="1">`,
    `<stop offset="0" stop-color="${color(0, 0.25)}"/>`,
    `<stop offset="1" stop-color="${color(rng.range(60, 200), 0.7)}"/>`,
    '</linearGradient>',
    '</defs>',
    `<rect width="${width}" height="${height}" fill="url(#bg)"/>`,
    ...shapes,
    `<path d="${wave} L${width} ${height} L0 ${height} Z" fill="${color(180, 0.3)}" opacity="0.55"/>`,
    '</svg>',
    '',
  ].join('\n');
}

/** Writes the SVG of an image plan to `path`. */
export async function renderSvg(plan: ImageOutput, path: string): Promise<void> {
  await writeFile(path, buildSvg(plan), 'utf8');
}
