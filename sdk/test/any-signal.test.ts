/** `anySignal`: AbortSignal.any where the runtime has it, and the same by hand where it does not (Node 20.0–20.2, older browsers). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anySignal } from '../src/transport.ts';

for (const [name, native] of [
  ['by hand', null],
  ['AbortSignal.any', AbortSignal.any.bind(AbortSignal)],
] as const) {
  test(`${name}: aborted by the first of its signals, with that one's reason`, () => {
    const a = new AbortController();
    const b = new AbortController();
    const any = anySignal([a.signal, b.signal], native);
    assert.equal(any.aborted, false);
    b.abort(new Error('b first'));
    assert.equal(any.aborted, true);
    assert.equal((any.reason as Error).message, 'b first');
    a.abort(new Error('a later'));
    assert.equal((any.reason as Error).message, 'b first');
  });

  test(`${name}: a signal already aborted aborts it at once`, () => {
    const a = new AbortController();
    a.abort('gone');
    const any = anySignal([new AbortController().signal, a.signal], native);
    assert.equal(any.aborted, true);
    assert.equal(any.reason, 'gone');
  });
}

test('by hand: once aborted, it lets go of the other signals', () => {
  const a = new AbortController();
  const b = new AbortController();
  let added = 0;
  let removed = 0;
  const counted = (signal: AbortSignal): AbortSignal => {
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added += 1;
      add(...args);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed += 1;
      remove(...args);
    }) as typeof signal.removeEventListener;
    return signal;
  };
  anySignal([counted(a.signal), counted(b.signal)], null);
  a.abort();
  assert.equal(added, 2);
  assert.equal(removed, 2);
});
