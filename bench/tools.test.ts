import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SERVICE_NODE_FLAGS } from './child.ts';
import { generatorBound, summarizeRounds } from './http-rounds.ts';
import { busyBetween, busyCpuSeconds, holdIdlePolling, planCpus } from './tools.ts';
import { parseWrkOutput } from './wrk.ts';

// The benches' own arithmetic (the figures of docs/performance.md come from it): wrk's summary line,
// how rounds add up, when the generator is called the limit, how the CPUs are split.

test('parseWrkOutput reads the JSON line the Lua script prints, and refuses output without one', () => {
  const out = [
    'Running 5s test @ http://127.0.0.1:1/',
    '  1 threads and 50 connections',
    'WRKJSON {"duration_us":5000000,"requests":100000,"bytes":110000000,"connect":0,"read":1,"write":0,"status":2,"timeout":3,"p50":500,"p90":900,"p99":4000}',
    '',
  ].join('\n');
  const parsed = parseWrkOutput(out);
  assert.equal(parsed.requests, 100_000);
  assert.equal(parsed.p99, 4000);
  assert.throws(() => parseWrkOutput('Running 5s test'), /no summary/);
});

const round = (ok: number, seconds: number, p50: number, p99: number, cores: number, server: number) => ({
  outcome: {
    seconds,
    ok,
    failures: 1,
    badStatus: 0,
    p50,
    p90: p50,
    p99,
    bytesPerSecond: 1000,
    generatorCores: cores,
    generatorThreads: 1,
  },
  serverCores: server,
  bystanderCores: server / 10,
});

test('summarizeRounds: rate over all rounds, median p50, worst p99, failures with the warm-up', () => {
  const m = summarizeRounds(
    'x',
    [round(1000, 1, 1, 5, 0.5, 1), round(3000, 1, 3, 9, 0.95, 0.9), round(2000, 2, 2, 7, 0.4, 0.8)],
    4,
  );
  assert.equal(m.rate, 6000 / 4);
  assert.deepEqual(m.roundRates, [1000, 3000, 1000]);
  assert.deepEqual(m.roundP99s, [5, 9, 7]);
  assert.equal(m.p50, 2);
  assert.equal(m.p99, 9);
  assert.equal(m.failures, 4 + 3);
  assert.equal(m.generatorCores, 0.95);
  assert.ok(Math.abs(m.serverCores - 0.9) < 1e-9);
  assert.ok(Math.abs(m.bystanderCores - 0.1) < 1e-9, 'the busiest round of the other servers');
  assert.equal(generatorBound(m), true, 'a round at 95 % of the generator core: it may be the limit');
  assert.equal(generatorBound(summarizeRounds('y', [round(1, 1, 1, 1, 0.5, 1)], 0)), false);
});

test("busyCpuSeconds reads each CPU's busy ticks from /proc/stat, idle, I/O wait and steal left out", () => {
  const stat = [
    'cpu  300 10 200 9000 50 5 5 0 0 0',
    'cpu0 100 0 50 4000 20 2 3 1 0 0',
    'cpu1 200 10 150 5000 30 3 2 0 0 0',
    'intr 12345',
  ].join('\n');
  assert.deepEqual(busyCpuSeconds(stat), [1.55, 3.65]);
  const later = busyCpuSeconds(stat.replace('cpu0 100 0 50 4000', 'cpu0 180 0 70 4100'));
  assert.deepEqual(
    busyBetween(busyCpuSeconds(stat), later).map((s) => Number(s.toFixed(2))),
    [1, 0],
  );
  assert.ok(busyCpuSeconds().length >= 1, 'this machine has a /proc/stat');
});

test('planCpus: half the CPUs for the generator, the rest for the server; nothing pinned on one CPU', () => {
  assert.deepEqual(planCpus(1), { server: null, generator: null, generatorCpus: 1 });
  assert.deepEqual(planCpus(2), { server: '0', generator: '1', generatorCpus: 1 });
  assert.deepEqual(planCpus(8), { server: '0-3', generator: '4-7', generatorCpus: 4 });
  assert.deepEqual(planCpus(3), { server: '0-1', generator: '2', generatorCpus: 1 });
});

test('bench servers run with the V8 flags of npm start and npm run worker', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  for (const script of ['start', 'worker']) {
    const flags = (pkg.scripts[script] ?? '').split(' ').filter((word) => word.startsWith('--'));
    assert.deepEqual(flags, [...SERVICE_NODE_FLAGS], script);
  }
});

test('holdIdlePolling writes a 0 µs request and keeps it open until released; says why when it cannot', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-idle-'));
  try {
    const file = path.join(dir, 'latency');
    const hold = holdIdlePolling({}, file);
    assert.deepEqual([...fs.readFileSync(file)], [0, 0, 0, 0]);
    assert.match(hold.description, /idle CPUs poll/);
    hold.release();
    hold.release();
    const missing = holdIdlePolling({}, path.join(dir, 'absent', 'latency'));
    assert.match(missing.description, /own idle states .*ENOENT/);
    missing.release();
    const off = holdIdlePolling({ BENCH_IDLE_POLL: '0' }, file);
    assert.match(off.description, /BENCH_IDLE_POLL=0/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
