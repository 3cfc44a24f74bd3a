/**
 * MP4 renderer: H.264 (yuv420p, faststart) drawn by the bundled ffmpeg from lavfi sources. A seeded
 * plasma background, a roaming window of moving content (Mandelbrot zoom, Game of Life, cellular
 * automaton or test pattern) with cycling hue, a bouncing block and a quiet AAC drone. Low frame rate
 * and `ultrafast` keep long full-HD clips cheap.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import type { VideoOutput } from '../../../catalog/index.ts';
import { createRng, hex, hsl, type Rng } from './seed.ts';

/** Path of the ffmpeg binary used for video. */
export const FFMPEG_PATH: string = ffmpeg.path;

const even = (value: number): number => Math.max(2, 2 * Math.round(value / 2));
const num = (value: number): string => value.toFixed(4);

/** Frames per second for a frame size: fewer for larger pictures. */
export function frameRate(width: number, height: number): number {
  const pixels = width * height;
  return pixels <= 640 * 480 ? 24 : pixels <= 1280 * 720 ? 15 : 12;
}

/**
 * The background sets the clip's frame: square pixels (`setsar=1`), or the scale from a small drawing
 * whose proportions are not exactly the frame's (214×120 to 854×480) leaves a pixel aspect that shows
 * the clip at 107:60 instead of 16:9.
 */
function backgroundFilter(rng: Rng, width: number, height: number, fps: number, seconds: number): string {
  const bw = even(Math.min(480, width / 4));
  const bh = even(Math.min(480, height / 4));
  const wave = (): string =>
    `128+80*sin(X/${num(rng.range(6, 40))}+${num(rng.range(0, 6))})*cos(Y/${num(rng.range(6, 40))}` +
    `+${num(rng.range(0, 6))})`;
  return (
    `color=c=black:s=${bw}x${bh}:r=${fps}:d=1,format=rgb24,` +
    `geq=r='${wave()}':g='${wave()}':b='${wave()}',` +
    `scale=${width}:${height}:flags=bicubic,setsar=1,format=yuv420p,loop=loop=-1:size=1,` +
    `trim=duration=${num(seconds)},setpts=N/(${fps}*TB)[bg]`
  );
}

function windowSource(rng: Rng, width: number, height: number, fps: number): string {
  const size = `${width}x${height}`;
  const hue = rng.range(0, 360);
  const colour = (shift: number): string => hex(hsl((hue + shift) % 360, 0.8, 0.55));
  switch (rng.int(0, 3)) {
    case 0: {
      const spots = [
        [-0.743643887037151, 0.13182590420533],
        [-0.1011, 0.9563],
        [-1.25066, 0.02012],
        [0.001643721971153, -0.822467633298876],
      ] as const;
      const [x, y] = rng.pick(spots);
      return `mandelbrot=s=${size}:r=${fps}:maxiter=256:start_x=${x}:start_y=${y}:start_scale=3:end_scale=0.02:end_pts=60`;
    }
    case 1:
      return (
        `life=s=${size}:r=${fps}:ratio=${num(rng.range(0.15, 0.5))}:seed=${rng.int(1, 1e6)}:mold=12:` +
        `life_color=${colour(0)}:death_color=${colour(150)}:mold_color=${colour(60)}`
      );
    case 2:
      return `cellauto=s=${size}:r=${fps}:rule=${rng.pick([18, 30, 90, 110, 150])}:random_fill_ratio=0.5:seed=${rng.int(1, 1e6)}`;
    default:
      return `testsrc2=s=${size}:r=${fps}`;
  }
}

/**
 * One AAC frame (1,024 samples at 44.1 kHz). The encoder pads the sound to whole frames and adds its own
 * priming, so a sound as long as the clip made the file a frame longer than asked (5 s → 5.023 s: too long
 * to be used again as a 5 s reference video). The sound is two frames shorter; the file is the clip's length.
 */
const AAC_FRAME_SECONDS = 1024 / 44_100;

/** A quiet seeded drone (root and fifth with a slow swell), so players and probes see a sound track. */
function ambientAudio(rng: Rng, seconds: number): string {
  const root = num(rng.range(110, 220));
  const swell = num(rng.range(0.1, 0.4));
  return (
    `aevalsrc=exprs='0.06*sin(2*PI*${root}*t)*(0.6+0.4*sin(2*PI*${swell}*t))+0.03*sin(3*PI*${root}*t)':` +
    `s=44100:c=mono:d=${num(seconds)}[aud]`
  );
}

/** ffmpeg arguments that draw a plan's clip into `path`. */
export function ffmpegArgs(plan: VideoOutput, path: string): string[] {
  const { width, height, durationSeconds: seconds } = plan;
  const rng = createRng(plan.seed, 'video');
  const fps = frameRate(width, height);
  const ww = even(width / 3);
  const wh = even(height / 3);
  // The window's content is drawn small and scaled up: cheaper to draw and to encode.
  const factor = Math.min(4, Math.max(1, ww / 160));
  const block = even(Math.min(width, height) / 8);
  const speed = (): string => num(rng.range(0.4, 1.3));
  const graph = [
    backgroundFilter(rng, width, height, fps, seconds),
    `${windowSource(rng, even(ww / factor), even(wh / factor), fps)},format=yuv420p,` +
      `hue=h='${num(rng.range(0, 360))}+t*${num(rng.range(10, 40))}',scale=${ww}:${wh}[win]`,
    `color=c=${hex(hsl(rng.range(0, 360), 0.9, 0.6))}:s=${block}x${block}:r=${fps}[blk]`,
    `[bg][win]overlay=x='(W-w)*(0.5+0.45*sin(t*${speed()}))':y='(H-h)*(0.5+0.45*cos(t*${speed()}))':shortest=1[mid]`,
    `[mid][blk]overlay=x='(W-w)*abs(sin(t*${speed()}))':y='(H-h)*abs(cos(t*${speed()}))':shortest=1,format=yuv420p[out]`,
    ambientAudio(rng, Math.max(AAC_FRAME_SECONDS, seconds - 2 * AAC_FRAME_SECONDS)),
  ].join(';');
  return [
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    '-filter_complex',
    graph,
    '-map',
    '[out]',
    '-t',
    num(seconds),
    '-r',
    String(fps),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '28',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    '-map',
    '[aud]',
    '-c:a',
    'aac',
    '-b:a',
    '48k',
    '-shortest',
    '-y',
    path,
  ];
}

/**
 * Runs ffmpeg with `args`; kills it when `signal` aborts; rejects with its last words on failure. With
 * `feed`, its standard input is a pipe that `feed` writes (and that is ended after it).
 */
export function runFfmpeg(
  args: string[],
  signal?: AbortSignal,
  feed?: (stdin: Writable) => Promise<void>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const child = spawn(FFMPEG_PATH, args, {
      stdio: [feed ? 'pipe' : 'ignore', 'ignore', 'pipe'],
      signal,
      killSignal: 'SIGKILL',
    });
    if (feed && child.stdin) {
      const stdin = child.stdin;
      // A write after ffmpeg ended (it failed, or was killed) is said by its exit, not by EPIPE.
      stdin.on('error', () => {});
      feed(stdin).then(
        () => stdin.end(),
        (error: unknown) => {
          child.kill('SIGKILL');
          reject(error);
        },
      );
    }
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on('error', (error) => {
      reject(signal?.aborted ? signal.reason : new Error(`ffmpeg failed to start: ${error.message}`));
    });
    child.on('close', (code, killedBy) => {
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      else reject(new Error(`ffmpeg exited with ${code ?? killedBy}: ${stderr.trim() || 'no output'}`));
    });
  });
}

/** Writes the MP4 of a video plan to `path`; a partial file is removed on failure or abort. */
export async function renderMp4(plan: VideoOutput, path: string, signal?: AbortSignal): Promise<void> {
  try {
    await runFfmpeg(ffmpegArgs(plan, path), signal);
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
}
