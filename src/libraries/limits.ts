/**
 * The `limits` of a list response (CONTRACT §7), derived from what the declaration already says: the
 * bounds of body fields from the body schema itself, the accepted files from the file rules (bytes,
 * shown in MB as the reference writes them).
 */
import { z } from 'zod';
import { MB } from './fields.ts';
import type { LibraryDecl, LinkedFiles } from './types.ts';

/**
 * Live (not deleted) records one account may keep in one library; the next creation is 409
 * too_many_records. Lists have no paging, so this is what keeps them small: every creation is free.
 */
export const MAX_RECORDS_PER_LIBRARY = 500;

/** Bounds of a text field as `limits` show them. */
export interface TextBounds {
  min_length: number;
  max_length: number;
}
/** Bounds of a list field (and of a one-link `*_url` field) as `limits` show them. */
export interface ListBounds {
  min_items: number;
  max_items: number;
}
/** A field's accepted files as `limits.accepted_files` shows them. */
export interface AcceptedFilesView {
  formats: LinkedFiles['formats'];
  max_size_mb: number;
  max_duration_seconds?: number;
}

interface FieldSchema {
  type?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

function boundOf(field: string, schema: FieldSchema | undefined): TextBounds | ListBounds {
  // A `*_url` field takes one link, as a string or a one-item list (CONTRACT §7).
  if (field.endsWith('_url')) return { min_items: 1, max_items: 1 };
  if (schema?.type === 'array' && schema.maxItems !== undefined) {
    return { min_items: schema.minItems ?? 0, max_items: schema.maxItems };
  }
  if (schema?.type === 'string' && schema.maxLength !== undefined) {
    return { min_length: schema.minLength ?? 0, max_length: schema.maxLength };
  }
  throw new Error(`${field}: not a bounded text, list or link field`);
}

/**
 * The bounds of `fields` of an object schema, read from the schema (what the body enforces is what the
 * list shows), in the order given: `{ name: { min_length, max_length }, image_urls: { min_items, … } }`.
 */
export function boundsOf(
  schema: z.ZodType,
  fields: readonly string[],
): Readonly<Record<string, TextBounds | ListBounds>> {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as {
    properties?: Record<string, FieldSchema>;
  };
  return Object.fromEntries(fields.map((field) => [field, boundOf(field, json.properties?.[field])]));
}

/** File rules as `limits.accepted_files` shows them: formats, size in MB, longest recording. */
export function acceptedFilesView(
  files: Readonly<Record<string, LinkedFiles>>,
): Record<string, AcceptedFilesView> {
  return Object.fromEntries(
    Object.entries(files).map(([field, rule]) => [
      field,
      {
        formats: rule.formats,
        max_size_mb: rule.maxBytes / MB,
        ...(rule.maxSeconds === undefined ? {} : { max_duration_seconds: rule.maxSeconds }),
      },
    ]),
  );
}

/**
 * A list response's `limits`: the declared bounds, how many live records the library holds at most, then
 * `accepted_files` when the library links files.
 */
export function limitsOf(decl: LibraryDecl): Record<string, unknown> {
  const files = { ...decl.files, ...decl.laterFiles };
  return {
    ...decl.limits,
    records: { min: 0, max: MAX_RECORDS_PER_LIBRARY },
    ...(Object.keys(files).length > 0 ? { accepted_files: acceptedFilesView(files) } : {}),
  };
}
