/**
 * Seeded music for the audio simulator: a four-chord progression in the plan's key and tempo with pad,
 * bass, lead melody and light drums, rendered from wavetables chunk by chunk. When looping, tails
 * that run past the end wrap around to the beginning so the end flows into the start.
 */
import type { AudioOutput } from '../../../catalog/index.ts';
import { createRng } from './seed.ts';

/** Fills `out` with the samples that start at sample `start` (called with consecutive ranges). */
export interface SampleSource {
  render(start: number, out: Float32Array): void;
}

type Timbre = 'lead' | 'pad' | 'bass' | 'kick' | 'hat';

interface NoteEvent {
  start: number;
  length: number;
  freq: number;
  amp: number;
  timbre: Timbre;
}

const TABLE_SIZE = 2048;
const DECAY_SECONDS: Record<Timbre, number> = { lead: 0.35, pad: 1.6, bass: 0.6, kick: 0.12, hat: 0.03 };

function wavetable(harmonics: readonly number[]): Float32Array {
  const table = new Float32Array(TABLE_SIZE + 1);
  for (let i = 0; i <= TABLE_SIZE; i++) {
    let v = 0;
    harmonics.forEach((amp, h) => {
      v += amp * Math.sin((2 * Math.PI * (h + 1) * i) / TABLE_SIZE);
    });
    table[i] = v;
  }
  return table;
}

const TABLES: Record<'lead' | 'pad' | 'bass', Float32Array> = {
  lead: wavetable([1, 0.45, 0.25, 0.12, 0.06]),
  pad: wavetable([1, 0.3, 0.2, 0.1, 0.08, 0.05]),
  bass: wavetable([1, 0.5, 0.1]),
};

const NOTE_NAMES: Record<string, number> = { c: 0, d: 2, e: 4, f: 5, g: 7, a: 9, b: 11 };
const MAJOR = [0, 2, 4, 5, 7, 9, 11];
const MINOR = [0, 2, 3, 5, 7, 8, 10];
const PROGRESSIONS = [
  [0, 4, 5, 3],
  [0, 5, 3, 4],
  [5, 3, 0, 4],
  [0, 3, 4, 3],
  [0, 2, 5, 4],
  [3, 4, 0, 0],
];

/** Pitch class (0–11) and mode of a key such as `C#m`, `Bb`, `A minor`; seeded when absent. */
export function parseKey(key: string | undefined, fallback: () => number): { root: number; minor: boolean } {
  const match = /^\s*([a-g])\s*([#♯b♭]?)\s*(.*)$/i.exec(key ?? '');
  if (!match) {
    const pick = fallback();
    return { root: pick % 12, minor: pick >= 12 };
  }
  const accidental = match[2] === '#' || match[2] === '♯' ? 1 : match[2] ? -1 : 0;
  const root = (NOTE_NAMES[match[1]!.toLowerCase()]! + accidental + 12) % 12;
  return { root, minor: /^(m(?!aj)|min)/i.test(match[3]!.trim()) };
}

const midiHz = (note: number): number => 440 * 2 ** ((note - 69) / 12);

/** Plans the note events of a plan's tune (sample positions at `sampleRate`). */
function composeMusic(plan: AudioOutput, sampleRate: number, total: number): NoteEvent[] {
  const rng = createRng(plan.seed, 'music');
  const { root, minor } = parseKey(plan.musicalKey, () => rng.int(0, 23));
  const scale = minor ? MINOR : MAJOR;
  const seconds = total / sampleRate;
  let beat = 60 / (plan.tempoBpm ?? rng.int(84, 132));
  // A free-tempo loop gets a whole number of bars so the beat carries across the seam.
  if (plan.loop && plan.tempoBpm === undefined)
    beat = seconds / (4 * Math.max(1, Math.round(seconds / (4 * beat))));
  const beatSamples = beat * sampleRate;
  const progression = rng.pick(PROGRESSIONS);
  const motifs = Array.from({ length: 4 }, () =>
    Array.from({ length: 16 }, () => (rng.next() < 0.18 ? null : rng.int(-2, 7))),
  );
  const swingHat = rng.next() < 0.5;
  const note = (degree: number, octave: number): number => {
    const wrapped = ((degree % 7) + 7) % 7;
    return 12 * (octave + 1) + root + scale[wrapped]! + 12 * Math.floor(degree / 7);
  };
  const events: NoteEvent[] = [];
  const add = (beatAt: number, beats: number, freq: number, amp: number, timbre: Timbre): void => {
    const start = Math.round(beatAt * beatSamples);
    if (start < total) events.push({ start, length: Math.round(beats * beatSamples), freq, amp, timbre });
  };
  const bars = Math.ceil(total / (4 * beatSamples));
  for (let bar = 0; bar < bars; bar++) {
    const degree = progression[bar % 4]!;
    const at = bar * 4;
    for (const step of [0, 2, 4]) add(at, 4.2, midiHz(note(degree + step, 3)), 0.12, 'pad');
    add(at, 1.8, midiHz(note(degree, 2)), 0.3, 'bass');
    add(at + 2, 1.8, midiHz(note(degree + (bar % 2 === 0 ? 0 : 4), 2)), 0.26, 'bass');
    add(at, 0.5, 0, 0.6, 'kick');
    add(at + 2, 0.5, 0, 0.5, 'kick');
    for (let h = 0; h < 4; h++) add(at + h + (swingHat ? 0.58 : 0.5), 0.25, 0, 0.12, 'hat');
    const motif = motifs[Math.floor(bar / 2) % 4]!;
    for (let s = 0; s < 8; s++) {
      const step = motif[(bar % 2) * 8 + s];
      if (step === null || step === undefined) continue;
      // Strong eighths land on chord tones, the others walk the scale around them.
      const target = s % 2 === 0 ? degree + 2 * (((step % 3) + 3) % 3) : degree + step;
      add(at + s / 2, s % 2 === 0 ? 0.9 : 0.45, midiHz(note(target, 4)), 0.2, 'lead');
    }
  }
  if (plan.loop) {
    for (const e of [...events])
      if (e.start + e.length > total) events.push({ ...e, start: e.start - total });
  }
  return events.sort((a, b) => a.start - b.start);
}

function noise(n: number): number {
  let h = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h & 0xffff) / 32768 - 1;
}

function addEvent(e: NoteEvent, start: number, out: Float32Array, sampleRate: number): void {
  const from = Math.max(start, e.start);
  const to = Math.min(start + out.length, e.start + e.length + Math.round(0.08 * sampleRate));
  if (from >= to) return;
  const attack = (e.timbre === 'pad' ? 0.08 : 0.008) * sampleRate;
  const decay = DECAY_SECONDS[e.timbre] * sampleRate;
  const release = 0.08 * sampleRate;
  const table = e.timbre === 'lead' || e.timbre === 'pad' || e.timbre === 'bass' ? TABLES[e.timbre] : null;
  const step = (e.freq / sampleRate) * TABLE_SIZE;
  // Incremental envelope and phase: no exp or modulo per sample.
  const fall = Math.exp(-1 / decay);
  let level = Math.exp(-(from - e.start) / decay) * e.amp;
  let pos = ((from - e.start) * step) % TABLE_SIZE;
  for (let s = from; s < to; s++) {
    const t = s - e.start;
    let env = level;
    if (t < attack) env *= t / attack;
    if (t > e.length) env *= 1 - (t - e.length) / release;
    level *= fall;
    let v: number;
    if (table) {
      const i = pos | 0;
      v = table[i]! + (table[i + 1]! - table[i]!) * (pos - i);
      pos += step;
      if (pos >= TABLE_SIZE) pos -= TABLE_SIZE;
    } else if (e.timbre === 'kick') {
      const seconds = t / sampleRate;
      v = Math.sin(2 * Math.PI * (45 * seconds + 12 * (1 - Math.exp(-seconds * 30))));
    } else {
      v = noise(t) - noise(t - 1) * 0.9;
    }
    out[s - start]! += v * env;
  }
}

/** Sample source of the plan's music. */
export function musicSource(plan: AudioOutput, sampleRate: number, total: number): SampleSource {
  const events = composeMusic(plan, sampleRate, total);
  const tail = Math.round(0.08 * sampleRate);
  let next = 0;
  let active: NoteEvent[] = [];
  return {
    render(start, out) {
      const end = start + out.length;
      while (next < events.length && events[next]!.start < end) active.push(events[next++]!);
      for (const e of active) addEvent(e, start, out, sampleRate);
      active = active.filter((e) => e.start + e.length + tail > end);
    },
  };
}
