import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { urlField } from './fields.ts';

test('a single link field takes a string or a one-item list, and its input schema says both', () => {
  assert.equal(urlField.parse('https://example.com/a.png'), 'https://example.com/a.png');
  assert.equal(urlField.parse(['https://example.com/a.png']), 'https://example.com/a.png');
  for (const wrong of [['https://example.com/a', 'https://example.com/b'], [], 'ftp://example.com/a', 5]) {
    assert.equal(urlField.safeParse(wrong).success, false, JSON.stringify(wrong));
  }
  const input = z.toJSONSchema(urlField, { io: 'input' }) as { anyOf?: Array<Record<string, unknown>> };
  assert.deepEqual(
    input.anyOf?.map((s) => s.type),
    ['string', 'array'],
  );
  assert.equal(input.anyOf?.[1]?.maxItems, 1);
  const output = z.toJSONSchema(urlField, { io: 'output' }) as Record<string, unknown>;
  assert.equal(output.type, 'string');
});
