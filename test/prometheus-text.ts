/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests: any line it does not
 * understand, a sample before its family's TYPE, a repeated series, a histogram whose buckets are not
 * cumulative or whose +Inf bucket differs from its count: each throws, naming the line.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {
  override name = 'ExpositionError';
}

/** Parses a whole scrape into its families by name. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const fail = (why: string): never => {
      throw new ExpositionError(`line ${index + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) continue; // a plain comment
      const [, kind, name = '', rest = ''] = meta;
      if (!METRIC_NAME.test(name)) fail('bad metric name');
      const family = families.get(name) ?? { name, type: 'untyped' as MetricType, help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest as MetricType)) fail('unknown type');
        if (family.samples.length > 0) fail('TYPE after samples');
        family.type = rest as MetricType;
      } else {
        family.help = unescapeHelp(rest);
      }
      families.set(name, family);
      continue;
    }
    const sample = parseSample(line, fail);
    const family = familyOf(families, sample.name) ?? fail('sample of no declared family');
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(series)) fail('repeated series');
    seen.add(series);
    family.samples.push(sample);
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket')))
      return family;
  }
  return undefined;
}

function parseSample(line: string, fail: (why: string) => never): Sample {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? fail('no metric name');
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at += 1;
    while (line[at] !== '}') {
      const labelName = /^[^=]*/.exec(line.slice(at))?.[0] ?? '';
      if (!LABEL_NAME.test(labelName)) fail('bad label name');
      at += labelName.length;
      if (line[at] !== '=' || line[at + 1] !== '"') fail('label without a quoted value');
      at += 2;
      let value = '';
      for (;;) {
        const c = line[at];
        if (c === undefined) fail('unterminated label value');
        if (c === '"') break;
        if (c === '\\') {
          const next = line[at + 1];
          if (next === 'n') value += '\n';
          else if (next === '\\' || next === '"') value += next;
          else fail('bad escape in label value');
          at += 2;
          continue;
        }
        value += c;
        at += 1;
      }
      at += 1;
      if (labelName in labels) fail('repeated label');
      labels[labelName] = value;
      if (line[at] === ',') at += 1;
      else if (line[at] !== '}') fail('expected , or }');
    }
    at += 1;
  }
  const rest = line.slice(at);
  const parts = /^ (\S+)(?: (-?\d+))?$/.exec(rest) ?? fail('expected " value [timestamp]"');
  return { name, labels, value: parseValue(parts[1] ?? '', fail) };
}

/** Values as Go's ParseFloat reads them, which Prometheus uses: NaN and Inf in any letter case. */
function parseValue(text: string, fail: (why: string) => never): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  if (lower === 'nan') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail('bad value');
  return Number(text);
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(n|\\)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new ExpositionError(`${family.name}: bucket without le`);
      group.buckets.push([le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), s.value]);
    } else if (s.name.endsWith('_count')) group.count = s.value;
  }
  for (const [key, group] of groups) {
    const sorted = [...group.buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++)
      if ((sorted[i]?.[1] ?? 0) < (sorted[i - 1]?.[1] ?? 0))
        throw new ExpositionError(`${family.name}${key}: buckets not cumulative`);
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY || inf[1] !== group.count)
      throw new ExpositionError(`${family.name}${key}: +Inf bucket differs from _count`);
  }
}

/** The value of the one sample of `family` whose labels include `labels`; throws when not exactly one. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = [...families.values()].find((f) => f.samples.some((s) => s.name === name));
  const matches = (family?.samples ?? []).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (matches.length !== 1)
    throw new Error(`${name}${JSON.stringify(labels)}: ${matches.length} samples, expected 1`);
  return (matches[0] as Sample).value;
}
