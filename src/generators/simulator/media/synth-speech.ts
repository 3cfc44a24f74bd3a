/**
 * Seeded voice-like sound for the speech simulator: a glottal pulse train with an intonation contour,
 * shaped by three formant resonators that glide between vowels, with fricative noise at syllable
 * onsets and pauses between words and sentences. Stateful, rendered chunk by chunk.
 */
import type { AudioOutput } from '../../../catalog/index.ts';
import { createRng } from './seed.ts';
import type { SampleSource } from './synth-music.ts';

/** Formant frequencies (Hz) of a few vowels. */
const VOWELS: readonly (readonly [number, number, number])[] = [
  [730, 1090, 2440], // a
  [530, 1840, 2480], // e
  [270, 2290, 3010], // i
  [570, 840, 2410], // o
  [300, 870, 2240], // u
  [660, 1720, 2410], // æ
];

interface Syllable {
  start: number;
  length: number;
  vowel: readonly [number, number, number];
  /** Fricative noise at the onset (samples), 0 for none. */
  onset: number;
  /** Pitch multiplier (intonation). */
  pitch: number;
}

/** Lays out syllables, words and sentences over `total` samples. */
function composeSpeech(seed: string, sampleRate: number, total: number): Syllable[] {
  const rng = createRng(seed, 'speech');
  const syllables: Syllable[] = [];
  let at = Math.round(0.15 * sampleRate);
  while (at < total) {
    const words = rng.int(3, 9);
    for (let w = 0; w < words && at < total; w++) {
      const count = rng.int(1, 4);
      for (let s = 0; s < count; s++) {
        const length = Math.round(rng.range(0.12, 0.26) * sampleRate);
        const progress = w / words;
        syllables.push({
          start: at,
          length,
          vowel: rng.pick(VOWELS),
          onset: rng.next() < 0.45 ? Math.round(rng.range(0.03, 0.07) * sampleRate) : 0,
          // Declining pitch over a sentence, with a stressed syllable now and then.
          pitch: (1.12 - 0.25 * progress) * (s === 0 && rng.next() < 0.4 ? 1.12 : 1),
        });
        at += length;
      }
      at += Math.round(rng.range(0.05, 0.16) * sampleRate);
    }
    at += Math.round(rng.range(0.35, 0.7) * sampleRate);
  }
  return syllables;
}

/** Two-pole resonator (band-pass) with its state. */
class Resonator {
  private y1 = 0;
  private y2 = 0;
  private a1 = 0;
  private a2 = 0;
  private gain = 0;

  tune(freq: number, bandwidth: number, sampleRate: number): void {
    const r = Math.exp((-Math.PI * bandwidth) / sampleRate);
    this.a1 = 2 * r * Math.cos((2 * Math.PI * freq) / sampleRate);
    this.a2 = -r * r;
    this.gain = 1 - r;
  }

  process(x: number): number {
    const y = this.gain * x + this.a1 * this.y1 + this.a2 * this.y2;
    this.y2 = this.y1;
    this.y1 = y;
    return y;
  }
}

/** Sample source of a voice-like plan. */
export function speechSource(plan: AudioOutput, sampleRate: number, total: number): SampleSource {
  const rng = createRng(plan.seed, 'voice');
  const baseF0 = rng.range(95, 220);
  const syllables = composeSpeech(plan.seed, sampleRate, total);
  const formants = [new Resonator(), new Resonator(), new Resonator()];
  const fricative = new Resonator();
  fricative.tune(rng.range(3500, 5500), 1800, sampleRate);
  const bandwidths = [90, 110, 170];
  const weights = [1, 0.6, 0.25];
  let current: [number, number, number] = [500, 1500, 2500];
  let phase = 0;
  let index = 0;
  let noiseState = rng.int(1, 0x7fffffff);
  const noise = (): number => {
    noiseState = (Math.imul(noiseState, 1103515245) + 12345) & 0x7fffffff;
    return noiseState / 0x40000000 - 1;
  };
  return {
    render(start, out) {
      for (let k = 0; k < out.length; k++) {
        const s = start + k;
        while (index < syllables.length && syllables[index]!.start + syllables[index]!.length <= s) index++;
        const syl = syllables[index];
        const inside = syl !== undefined && s >= syl.start;
        const t = inside ? (s - syl.start) / syl.length : 0;
        // Glide the formants towards the vowel and retune every 32 samples.
        if (inside && k % 32 === 0) {
          current = current.map((f, i) => f + (syl.vowel[i]! - f) * 0.18) as [number, number, number];
          formants.forEach((r, i) => {
            r.tune(current[i]!, bandwidths[i]!, sampleRate);
          });
        }
        const seconds = s / sampleRate;
        const f0 = baseF0 * (inside ? syl.pitch * (1 - 0.08 * t) : 1) * (1 + 0.012 * Math.sin(seconds * 31));
        phase = (phase + f0 / sampleRate) % 1;
        // Glottal pulse: a skewed, band-limited-ish sawtooth with breath noise.
        const source = (phase < 0.6 ? phase / 0.6 : (1 - phase) / 0.4) * 2 - 1 + 0.08 * noise();
        const env = inside ? Math.sin(Math.PI * t) ** 0.6 : 0;
        let v = 0;
        for (let i = 0; i < 3; i++) v += formants[i]!.process(source * env) * weights[i]!;
        const hiss = fricative.process(noise());
        const onsetGain = inside && syl.onset > 0 && s - syl.start < syl.onset ? 0.8 : 0;
        out[k]! += v * 0.35 + hiss * onsetGain * 0.5;
      }
    },
  };
}
