/**
 * The shape of a library declaration: one small object per library says who owns it, what its creation
 * body is, which limits the list shows, how creation works and how a record looks (CONTRACT §7).
 */
import type { z } from 'zod';
import type { Db, LibrarySegment } from '../db/index.ts';
import type { ApiError } from '../errors.ts';
import type { MediaFormat } from '../catalog/index.ts';
import type { LibraryGenerator } from '../generators/library.ts';
import type { ProbeBudget } from '../tasks/inputs.ts';

/** What the media probe tells about a linked file; throws ApiError for files that break a rule. */
export interface ResolvedInput {
  durationSeconds?: number;
  format: string;
  sizeBytes: number;
}
/** Accepted formats and size of a linked file, as the list responses' `limits` show them. */
export interface AcceptedFiles {
  formats: readonly MediaFormat[];
  max_size_mb: number;
}
/**
 * Probes the file behind a link of field `field` (`image_urls.0`, `source_url`) within the request's
 * budget: its signal ends the download (time up, another link refused), its meter counts the bytes.
 */
export type InputResolver = (
  url: string,
  field: string,
  accepted: AcceptedFiles,
  budget?: ProbeBudget,
) => Promise<ResolvedInput>;
/** Files a URL field of a creation body links to: the accepted files and, for recordings, their length. */
export interface LinkedFiles extends AcceptedFiles {
  /** Longest accepted recording (seconds). */
  max_duration_seconds?: number;
}

/** The state a record takes when its pending step ends (applied lazily on read). */
export interface PendingStep {
  status: string;
  /** Public fields to merge (for example a singing voice's phrase). */
  data?: Record<string, unknown>;
  /** The record's name from then on (a verified singing voice). */
  name?: string;
  error?: string;
}

/** Our bookkeeping of a record, never shown. */
export interface PrivateData {
  /** What the record becomes at `ready_at`. */
  next?: PendingStep;
  [key: string]: unknown;
}

/** A library record as the service works with it (JSON columns parsed). */
export interface StoredRecord {
  id: string;
  accountId: string;
  model: string;
  library: LibrarySegment;
  name: string | null;
  status: string;
  data: Record<string, unknown>;
  private: PrivateData;
  uniqueKey: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  readyAt: string | null;
  deletedAt: string | null;
}

export interface CreateContext {
  db: Db;
  accountId: string;
  /** Id the new record will have (known before it is stored, for labels and seeds). */
  recordId: string;
  resolveInput: InputResolver;
  generator: LibraryGenerator;
  signal: AbortSignal;
  /** The probed files of the body's URL fields (`LibraryDecl.files`), by field, in the order given. */
  inputs: Readonly<Record<string, readonly ResolvedInput[]>>;
}

/** What a declaration makes of an accepted body. */
export interface CreationPlan {
  name: string | null;
  /** Public fields of the record. */
  data: Record<string, unknown>;
  private?: Record<string, unknown>;
  /** Unique among the live records of this library of the account. */
  uniqueKey?: string;
}

export type CreateFailedCode = 'element_create_failed' | 'persona_create_failed' | 'library_create_failed';

export interface LibraryDecl<B = unknown> {
  /** Key of the owning model (CONTRACT §2). */
  model: string;
  /** Last path segment; also the list field's name (CONTRACT §7). */
  segment: LibrarySegment;
  /** One line for the OpenAPI summary. */
  title: string;
  /** Creation body: a strict object, any other field is 422 invalid_request (CONTRACT §7). */
  body: z.ZodType<B>;
  /** A record as the API shows it (OpenAPI). */
  record: z.ZodType;
  /** Bounds shown in the list response and enforced by `body`. */
  limits: Readonly<Record<string, unknown>>;
  /**
   * Every URL field of the creation body and the files it accepts (shown as `limits.accepted_files`). Each
   * link goes through the guarded probe before `prepare`: private and metadata addresses, wrong types,
   * sizes and lengths are refused (CONTRACT §6, issue 10.16).
   */
  files: Readonly<Record<string, LinkedFiles>>;
  /** Further fields of the list response (`tags` of elements, `presets` of omni voices). */
  listExtras?: Readonly<Record<string, unknown>>;
  /** Records of this library carry `status` (CONTRACT §7: "records that learn or wait carry status"). */
  hasStatus: boolean;
  /** Code of a refusal by the generator (reference: 502). */
  failCode: CreateFailedCode;
  /** Present for records that keep learning after the 201 (music styles, singing voices). */
  learns?: {
    initial: string;
    /** What the record becomes when the step succeeds. */
    succeeded(ctx: CreateContext, plan: CreationPlan): Promise<PendingStep>;
  };
  /** Checks that need the database or the files, then the record's name, data and unique key. */
  prepare(body: B, ctx: CreateContext): Promise<CreationPlan>;
  /** Refusal for a taken unique key (409). */
  taken?(plan: CreationPlan): ApiError;
  /** Public fields of a record beyond id, name, status, error and created_at. (Default: its data) */
  view?(record: StoredRecord): Record<string, unknown>;
}
