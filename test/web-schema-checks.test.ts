/**
 * The new-task form's client-side checks (src/web/client/schema-checks.ts) and field names as people read
 * them; the island runs the same code in the browser.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkValue, readable } from '../src/web/client/schema-checks.ts';
import { wordsOf } from '../src/web/words.ts';

const en = { ...wordsOf('en') };
const ru = { ...wordsOf('ru') };

test('field names become readable labels', () => {
  assert.equal(readable('image_urls'), 'Image urls');
  assert.equal(readable('songDescription'), 'Song description');
  assert.equal(readable('voice_2'), 'Voice 2');
  assert.equal(readable('infillStartS'), 'Infill start s');
});

test('each schema bound is checked, in the page language', () => {
  assert.deepEqual(checkValue('prompt', { type: 'string' }, undefined, true, en), ['Prompt: required.']);
  assert.deepEqual(checkValue('prompt', { type: 'string' }, undefined, false, en), []);
  assert.deepEqual(checkValue('prompt', { type: 'string' }, undefined, true, ru), [
    'Prompt: обязательное поле.',
  ]);
  assert.deepEqual(checkValue('t', { type: 'string', maxLength: 3 }, 'abcd', true, en), [
    'T: at most 3 characters.',
  ]);
  assert.deepEqual(checkValue('t', { type: 'string', minLength: 2 }, 'a', true, en), [
    'T: at least 2 characters.',
  ]);
  assert.deepEqual(checkValue('face_limit', { type: 'integer', minimum: 48 }, 10, false, en), [
    'Face limit: at least 48.',
  ]);
  assert.deepEqual(checkValue('n', { type: 'integer', maximum: 4 }, 4.5, false, en), [
    'N: a whole number is needed.',
    'N: at most 4.',
  ]);
  assert.deepEqual(checkValue('n', { type: 'number' }, Number.NaN, false, en), ['N: a number is needed.']);
  assert.deepEqual(checkValue('u', { type: 'string', format: 'uri' }, 'ftp://x', true, en), [
    'U: a link (http or https) is needed.',
  ]);
  assert.deepEqual(
    checkValue('u', { type: 'string', format: 'uri' }, 'https://example.com/a.png', true, en),
    [],
  );
  assert.deepEqual(checkValue('l', { type: 'array', minItems: 2, maxItems: 3 }, ['a'], true, en), [
    'L: at least 2 items.',
  ]);
  assert.deepEqual(checkValue('l', { type: 'array', maxItems: 1 }, ['a', 'b'], true, en), [
    'L: at most 1 items.',
  ]);
  assert.deepEqual(checkValue('x', { type: 'string', title: 'Named' }, undefined, true, en), [
    'Named: required.',
  ]);
});
