/**
 * The task request of the OpenAPI document: a union discriminated by model, each model's settings a union
 * discriminated by its mode selector, over the catalog's `Settings.<model>.<mode>` schemas.
 */
import type { OpenApiOperation } from './openapi.ts';

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** A `$ref` to `#/components/<group>/<name>`. */
export const ref = (group: string, name: string): { $ref: string } => ({
  $ref: `#/components/${group}/${name}`,
});

/** What the catalog tells the document: settings schemas by model and mode, and each model's selector. */
export interface SettingsCatalog {
  /** `Settings.<model>.<mode>` → JSON Schema of the mode's settings. */
  schemas: Record<string, Json>;
  /** Model key → name of its mode selector, null for a model with one mode. */
  modeField(model: string): string | null;
}

/**
 * The task request as a union discriminated by `model`: each model's variant links `TaskSettings.<model>`,
 * a union of its modes' `Settings.<model>.<mode>` discriminated by the model's mode selector.
 */
export function discriminateTaskRequest(
  operation: OpenApiOperation,
  schemas: Record<string, Json>,
  catalog: SettingsCatalog,
): void {
  const json = operation.requestBody?.content['application/json'];
  const generated = json?.schema as { properties?: Record<string, Json>; description?: string } | undefined;
  if (!json || !generated?.properties) return;
  const byModel = new Map<string, string[]>();
  for (const name of Object.keys(catalog.schemas)) {
    const [, model, mode] = name.split('.');
    if (model && mode) byModel.set(model, [...(byModel.get(model) ?? []), mode]);
  }
  const mapping: Record<string, string> = {};
  for (const [model, modes] of byModel) {
    const field = catalog.modeField(model);
    const modeRefs = Object.fromEntries(modes.map((m) => [m, ref('schemas', `Settings.${model}.${m}`).$ref]));
    schemas[`TaskSettings.${model}`] =
      field === null || modes.length === 1
        ? { description: `settings of ${model}`, allOf: Object.values(modeRefs).map(($ref) => ({ $ref })) }
        : {
            description: `settings of ${model}; \`${field}\` selects the mode`,
            oneOf: Object.values(modeRefs).map(($ref) => ({ $ref })),
            discriminator: { propertyName: field, mapping: modeRefs },
          };
    const { model: _model, settings: _settings, ...rest } = generated.properties;
    schemas[`TaskRequest.${model}`] = {
      type: 'object',
      properties: {
        model: { type: 'string', const: model },
        settings: ref('schemas', `TaskSettings.${model}`),
        ...rest,
      },
      required: ['model', 'settings'],
      additionalProperties: false,
    };
    mapping[model] = ref('schemas', `TaskRequest.${model}`).$ref;
  }
  schemas.TaskRequest = {
    description: 'a model key and its settings (the JSON Schema of each mode is also in GET /v1/models)',
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'model', mapping },
  };
  json.schema = ref('schemas', 'TaskRequest');
}
