/**
 * Marks the settings that name library records in a mode's JSON Schema with `x-library` (`{ model,
 * library }`: the records listed by GET /v1/models/{model}/{library}), so a form built from GET /v1/models
 * can offer the person's own records. The catalog's `references` of the mode is the one source: it is
 * asked which fields of a probe (every free text or list of texts set) name records.
 */
import type { ModeSpec } from '../catalog/index.ts';

type Schema = Record<string, unknown>;

/** The object branches of a settings schema: itself, or each of its `oneOf`s. */
function branches(schema: Schema): Schema[] {
  return Array.isArray(schema.oneOf) ? (schema.oneOf as Schema[]) : [schema];
}

function isFreeText(schema: unknown): boolean {
  const s = schema as Schema | undefined;
  return s?.type === 'string' && s.enum === undefined && s.const === undefined && s.format === undefined;
}

/** A value for every free text setting (and list of texts), so `references` reports the ones it reads. */
function probeOf(schema: Schema): Record<string, unknown> {
  const probe: Record<string, unknown> = {};
  for (const branch of branches(schema)) {
    for (const [field, property] of Object.entries((branch.properties ?? {}) as Record<string, Schema>)) {
      if (isFreeText(property)) probe[field] = `probe-${field}`;
      else if (property.type === 'array' && isFreeText(property.items)) probe[field] = [`probe-${field}`];
    }
  }
  return probe;
}

/** Adds `x-library` to the fields (or list items) of `schema` that `mode.references` names; in place. */
export function markLibraryFields(schema: Schema, mode: Pick<ModeSpec, 'references'>): Schema {
  if (!mode.references) return schema;
  let refs: ReturnType<NonNullable<ModeSpec['references']>>;
  try {
    refs = mode.references(probeOf(schema) as never);
  } catch {
    return schema;
  }
  for (const ref of refs) {
    const field = ref.field.split('.')[0] ?? ref.field;
    const mark = { model: ref.model, library: ref.library };
    for (const branch of branches(schema)) {
      const property = (branch.properties as Record<string, Schema> | undefined)?.[field];
      if (!property) continue;
      if (property.type === 'array' && property.items) (property.items as Schema)['x-library'] = mark;
      else if (isFreeText(property)) property['x-library'] = mark;
    }
  }
  return schema;
}
