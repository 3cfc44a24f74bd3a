import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findModel } from '../../catalog/index.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type GenerationRequest, GeneratorTransientError } from '../generator.ts';
import { FLAKY_FAILURES, SIM_MARKERS, Simulator } from './simulator.ts';

function request(prompt: string): GenerationRequest {
  const model = findModel('model-3d');
  const mode = model?.modes.find((m) => m.name === 'text_to_model');
  assert.ok(model && mode);
  const settings = { task_type: 'text_to_model', prompt, texture: false, pbr: false };
  const inputs = { files: [] };
  return {
    taskId: 't1',
    model: model.key,
    mode: mode.name,
    settings,
    inputs,
    plan: mode.plan(settings, inputs),
  };
}

describe('simulator runs', () => {
  test('find() answers the handle create() gave for the same run key, from the key alone', async () => {
    const clock = new ManualClock();
    const run = { key: 't1/1', startedAt: clock.now() };
    const created = await new Simulator({ clock, simSpeed: 1000 }).create(request('a cup'), run);
    clock.advance(5_000);
    const restarted = new Simulator({ clock, simSpeed: 1000 });
    assert.equal(await restarted.find(request('a cup'), run), created);
    assert.deepEqual(await restarted.status(created), { state: 'succeeded' });
  });

  test('[sim:flaky] answers a transient error twice per call kind and run, then works', async () => {
    const clock = new ManualClock();
    const sim = new Simulator({ clock, simSpeed: 1000 });
    const flaky = request(`a cup ${SIM_MARKERS.flaky}`);
    const run = { key: 't1/1', startedAt: clock.now() };
    for (let i = 0; i < FLAKY_FAILURES; i++) {
      await assert.rejects(sim.create(flaky, run), GeneratorTransientError);
    }
    const handle = await sim.create(flaky, run);
    for (let i = 0; i < FLAKY_FAILURES; i++)
      await assert.rejects(sim.status(handle), GeneratorTransientError);
    assert.equal((await sim.status(handle)).state, 'running');
    assert.equal((await sim.status(handle)).state, 'running');
  });

  test('progress stays within 0 to 99 when the clock steps back a little after the start', async () => {
    // The database clock is re-measured every minute, and a resumed run may be read by another process:
    // either can put "now" a few milliseconds before the run's recorded start.
    const clock = new ManualClock();
    const sim = new Simulator({ clock, simSpeed: 100 });
    const run = { key: 't1/1', startedAt: clock.now() };
    const handle = await sim.create(request('a cup'), run);
    clock.advance(-5);
    assert.deepEqual(await sim.status(handle), { state: 'running', progress: 0, pollAfterMs: 45 });
  });

  test('[sim:hang] polls never answer (the simulator takes no signal there at all)', async () => {
    const clock = new ManualClock();
    const sim = new Simulator({ clock, simSpeed: 1000 });
    const run = { key: 't1/1', startedAt: clock.now() };
    const handle = await sim.create(request(`a cup ${SIM_MARKERS.hang}`), run);
    const poll = sim.status(handle);
    const winner = await Promise.race([
      poll.then(() => 'answered'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 50)),
    ]);
    assert.equal(winner, 'still waiting');
  });
});
