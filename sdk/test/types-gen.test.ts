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

test('a document with shared components and $refs names the types after the components', async () => {
  const ref = (name: string): object => ({ $ref: `#/components/schemas/${name}` });
  const jsonOf = (schema: object): object => ({ content: { 'application/json': { schema } } });
  const task = {
    type: 'object',
    properties: { id: { type: 'string' }, status: { type: 'string', enum: ['queued', 'succeeded'] } },
    required: ['id', 'status'],
    additionalProperties: false,
  };
  const source = await renderSdkTypes({
    components: {
      schemas: {
        Task: task,
        Error: { type: 'object', properties: { error: { type: 'object' } }, required: ['error'] },
        'Settings.image.default': { type: 'object', properties: { prompt: { type: 'string' } } },
        Persona: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      },
    },
    paths: {
      '/v1/models/music/personas': {
        get: {
          responses: {
            200: jsonOf({
              type: 'object',
              properties: { personas: { type: 'array', items: ref('Persona') } },
            }),
          },
        },
        post: {
          requestBody: jsonOf({
            type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'],
          }),
          responses: { 201: jsonOf(ref('Persona')) },
        },
      },
      '/v1/tasks/{id}': {
        get: { operationId: 'getTask', responses: { 200: jsonOf(ref('Task')), 404: jsonOf(ref('Error')) } },
      },
      '/v1/tasks': {
        get: {
          operationId: 'listTasks',
          responses: {
            200: jsonOf({
              type: 'object',
              properties: {
                tasks: { type: 'array', items: ref('Task') },
                next_cursor: { type: ['string', 'null'] },
              },
              required: ['tasks', 'next_cursor'],
            }),
          },
        },
      },
    },
  });
  assert.equal(source.match(/export interface Task \{/g)?.length, 1);
  assert.match(source, /tasks: Task\[\];/);
  assert.match(source, /export interface ErrorBody \{/);
  assert.doesNotMatch(source, /export (interface|type) Error\b/);
  assert.match(source, /image: SettingsImageDefault;/);
  assert.match(source, /personas\?: Persona\[\];/);
  assert.match(source, /export type MusicPersonasRecord = Persona;/);
  assert.match(
    source,
    /'music\/personas': \{ list: MusicPersonasList; record: MusicPersonasRecord; create: MusicPersonasCreate \}/,
  );
});
