import fs from 'node:fs';
import path from 'node:path';

/**
 * `node bench/profile-summary.ts <file.cpuprofile> [--skip=SECONDS] [--until=SECONDS] [--top=N]`: where the CPU went in a
 * profile written by `BENCH_PROFILE_DIR=… npm run bench`, as self time by package and by function, and as
 * total (inclusive) time of the project's own functions. Idle samples are left out (a server child idles
 * while the other scenarios run); `--skip` also leaves out the first seconds (start-up, setup), `--until`
 * the samples after that many seconds of the profile (a drain's end, before a later mode).
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, a project folder, Node's own code, or V8 (gc, idle, program). */
export function ownerOf(url: string): string {
  if (url === '') return '(v8)';
  if (url.startsWith('node:')) return 'node:*';
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules?.[1]) return inModules[1];
  const inProject = /\/(src|bench|test)\/(.*)$/.exec(url);
  if (inProject?.[1] && inProject[2]) return `${inProject[1]}/${inProject[2]}`;
  return url;
}

function nameOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'}${url ? ` ${ownerOf(url)}:${lineNumber + 1}` : ''}`;
}

/** The busy samples (node id, µs) after the first `skipSeconds` of the profile and up to `untilSeconds`. */
export function samplesOf(
  profile: Profile,
  skipSeconds: number,
  untilSeconds = Number.POSITIVE_INFINITY,
): Array<[number, number]> {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const samples: Array<[number, number]> = [];
  let elapsed = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    elapsed += micros;
    if (elapsed >= skipSeconds * 1e6 && elapsed < untilSeconds * 1e6 && !idle.has(id))
      samples.push([id, micros]);
  });
  return samples;
}

/** Self time (µs) and total time (µs, each function counted once per sample) per key. */
export function times(
  profile: Profile,
  samples: ReadonlyArray<[number, number]>,
  keyOf: (node: ProfileNode) => string,
): { self: Map<string, number>; total: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const [id, micros] of samples) {
    const node = byId.get(id);
    if (!node) continue;
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + micros);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at);
      if (frame) onStack.add(keyOf(frame));
    }
    for (const frameKey of onStack) total.set(frameKey, (total.get(frameKey) ?? 0) + micros);
  }
  return { self, total };
}

function printTop(title: string, values: Map<string, number>, all: number, top: number): void {
  process.stdout.write(`\n${title}\n`);
  const rows = [...values.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [key, micros] of rows) {
    process.stdout.write(`${((micros / all) * 100).toFixed(1).padStart(6)} %  ${key}\n`);
  }
}

function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const file = process.argv.slice(2).find((a) => !a.startsWith('--'));
if (!file) {
  process.stderr.write(
    'usage: node bench/profile-summary.ts <file.cpuprofile> [--skip=SECONDS] [--until=SECONDS] [--top=N]\n',
  );
  process.exit(2);
}
const top = Number(flag('top') ?? 25);
const skip = Number(flag('skip') ?? 0);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const samples = samplesOf(profile, skip, Number(flag('until') ?? Number.POSITIVE_INFINITY));
const all = samples.reduce((sum, [, micros]) => sum + micros, 0);
process.stdout.write(`${path.basename(file)}: ${(all / 1e6).toFixed(2)} s of busy samples\n`);
printTop('Self time by owner', times(profile, samples, (n) => ownerOf(n.callFrame.url)).self, all, top);
const byFunction = times(profile, samples, nameOf);
printTop('Self time by function', byFunction.self, all, top);
const project = new Map([...byFunction.total].filter(([key]) => / (src|bench)\//.test(key)));
printTop('Total time of project functions (callees included)', project, all, top);
