/** sdk/src/types.gen.ts is generated from the service's OpenAPI document and must stay so. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { renderSdkTypes, SDK_TYPES_COMMAND, SDK_TYPES_PATH } from '../../scripts/sdk-types.ts';

test('types.gen.ts equals a fresh generation from /openapi.json', async () => {
  const committed = fs.existsSync(SDK_TYPES_PATH) ? fs.readFileSync(SDK_TYPES_PATH, 'utf8') : '';
  const generated = (await renderSdkTypes()).split('\n');
  const lines = committed.split('\n');
  const line = lines.findIndex((text, i) => text !== generated[i]);
  assert.ok(
    line === -1 && lines.length === generated.length,
    `sdk/src/types.gen.ts is out of date with the OpenAPI document; regenerate it with \`${SDK_TYPES_COMMAND}\` ` +
      `(line ${line + 1} generated: ${generated[line] ?? '(end of file)'})`,
  );
});

test('the generated types name the task, the settings of every model and every library', async () => {
  const source = fs.readFileSync(SDK_TYPES_PATH, 'utf8');
  for (const name of [
    'Task',
    'TaskList',
    'Price',
    'Me',
    'Upload',
    'ModelList',
    'SettingsByModel',
    'LibraryTypes',
  ]) {
    assert.match(source, new RegExp(`export (interface|type) ${name}\\b`), name);
  }
  assert.match(source, /'model-3d': SettingsModel3DTextToModel \| /);
  assert.match(source, /'music\/personas': \{/);
});
