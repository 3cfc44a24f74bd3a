import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds } from './tools.ts';

/**
 * The HTTP load generator of every bench: Debian's `wrk` (C, epoll), which on this kind of machine pushes
 * about twice what a Node-based generator can, so the server under test, not the generator, is the limit.
 * A Lua script picks the request (optionally rotating header sets, one per client) and prints the summary
 * as one JSON line that this module parses.
 */

/** What one wrk run sends. */
export interface WrkSpec {
  url: string;
  method?: 'GET' | 'POST';
  /** Headers of every request. */
  headers?: Readonly<Record<string, string>>;
  /**
   * Header sets used in turn, request by request (on top of `headers`): each set acts as a different client
   * (an API key per account, a Range per download).
   */
  rotate?: ReadonlyArray<Readonly<Record<string, string>>>;
  /**
   * Paths (with query) used in turn, request by request, instead of the URL's path. Rotated with the same
   * counter as `rotate`, so with equal lengths path i always goes with header set i (a task with its key).
   */
  paths?: readonly string[];
  body?: string;
  connections: number;
  seconds: number;
  /** wrk threads; defaults to the generator's CPU count. */
  threads?: number;
  /** `taskset -c` list the generator runs on, or null/undefined for no pinning. */
  cpus?: string | null;
  /** Per-request timeout (wrk's --timeout), seconds. */
  timeoutSeconds?: number;
}

/** The outcome of one run. */
export interface WrkOutcome {
  seconds: number;
  /** Responses with a 2xx/3xx status. */
  ok: number;
  /** Socket errors, timeouts and non-2xx/3xx answers. */
  failures: number;
  /** Non-2xx/3xx answers (part of `failures`). */
  badStatus: number;
  /** Latency percentiles of all responses, ms (wrk's HdrHistogram, microsecond resolution). */
  p50: number;
  p90: number;
  p99: number;
  /** Response bytes (headers included) per second. */
  bytesPerSecond: number;
  /** CPU the generator used, in cores (1.0 = one core busy all the time). */
  generatorCores: number;
  /** The generator's threads; when generatorCores is close to this, the generator was the limit. */
  generatorThreads: number;
}

const SCRIPT = `
local rotate = {}
local paths = {}
local base = {}
local method = "GET"
local body = nil
local counter = 0
local fixed = nil
local created = 0

function setup(thread)
  created = created + 1
  thread:set("offset", created * 7919)
end

function init(args)
  local spec = require_spec()
  method = spec.method
  body = spec.body
  base = spec.headers
  rotate = spec.rotate
  paths = spec.paths
  if #rotate == 0 and #paths == 0 then
    fixed = wrk.format(method, nil, base, body)
  else
    -- Each thread starts at a different place in the rotation (setup() gave it an offset).
    counter = offset or 0
  end
end

function request()
  if fixed then return fixed end
  counter = counter + 1
  local headers = {}
  for k, v in pairs(base) do headers[k] = v end
  if #rotate > 0 then
    for k, v in pairs(rotate[(counter % #rotate) + 1]) do headers[k] = v end
  end
  local path = nil
  if #paths > 0 then path = paths[(counter % #paths) + 1] end
  return wrk.format(method, path, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\nWRKJSON {"duration_us":%d,"requests":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d}\\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
`;

/** Lua source of a table holding the spec (strings quoted with %q-safe long brackets). */
function luaSpec(spec: WrkSpec): string {
  const str = (value: string): string => {
    let level = '';
    while (value.includes(`]${level}]`)) level += '=';
    return `[${level}[${value}]${level}]`;
  };
  const table = (record: Readonly<Record<string, string>>): string =>
    `{${Object.entries(record)
      .map(([k, v]) => `[ ${str(k)} ]=${str(v)}`)
      .join(',')}}`;
  return `function require_spec() return { method=${str(spec.method ?? 'GET')}, body=${
    spec.body === undefined ? 'nil' : str(spec.body)
  }, headers=${table(spec.headers ?? {})}, rotate={${(spec.rotate ?? []).map(table).join(',')}}, paths={${(
    spec.paths ?? []
  )
    .map(str)
    .join(',')}} } end\n`;
}

interface WrkJson {
  duration_us: number;
  requests: number;
  bytes: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
}

/** Reads the JSON line the script's done() prints. Exported for its unit test. */
export function parseWrkOutput(stdout: string): WrkJson {
  const line = stdout.split('\n').find((l) => l.startsWith('WRKJSON '));
  if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
  return JSON.parse(line.slice('WRKJSON '.length)) as WrkJson;
}

/** Runs wrk once and returns its figures; rejects when wrk cannot run. */
export async function runWrk(spec: WrkSpec): Promise<WrkOutcome> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-wrk-'));
  const script = path.join(dir, 'bench.lua');
  fs.writeFileSync(script, luaSpec(spec) + SCRIPT);
  const threads = Math.max(1, Math.min(spec.threads ?? 1, spec.connections));
  const args = [
    `-t${threads}`,
    `-c${spec.connections}`,
    `-d${Math.max(1, Math.round(spec.seconds))}s`,
    `--timeout`,
    `${spec.timeoutSeconds ?? 10}s`,
    '-s',
    script,
    spec.url,
  ];
  const command = spec.cpus ? 'taskset' : 'wrk';
  const argv = spec.cpus ? ['-c', spec.cpus, 'wrk', ...args] : args;
  try {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // wrk's CPU time: sampled from /proc while it runs (the last sample is within 100 ms of its end).
    const started = process.hrtime.bigint();
    let lastCpu = 0;
    let lastAt = started;
    const sampler = setInterval(() => {
      if (child.pid === undefined) return;
      const cpu = cpuSeconds(child.pid);
      if (cpu !== null) {
        lastCpu = cpu;
        lastAt = process.hrtime.bigint();
      }
    }, 100);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolve(exitCode));
    });
    clearInterval(sampler);
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${stderr || stdout}`);
    const json = parseWrkOutput(stdout);
    const seconds = json.duration_us / 1e6;
    const socketErrors = json.connect + json.read + json.write + json.timeout;
    const sampledSeconds = Number(lastAt - started) / 1e9;
    return {
      seconds,
      ok: json.requests - json.status,
      failures: socketErrors + json.status,
      badStatus: json.status,
      p50: json.p50 / 1000,
      p90: json.p90 / 1000,
      p99: json.p99 / 1000,
      bytesPerSecond: seconds > 0 ? json.bytes / seconds : 0,
      generatorCores: sampledSeconds > 0 ? lastCpu / sampledSeconds : 0,
      generatorThreads: threads,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
