/**
 * The shape of a library declaration: one small object per library says who owns it, what its creation
 * body is, which limits the list shows, how creation works and how a record looks (CONTRACT §7).
 */
import type { z } from 'zod';
import type { InputRule } from '../catalog/index.ts';
import type { Db } from '../db/index.ts';
import type { ApiError, errors } from '../errors.ts';
import type { LibraryGenerator, LibrarySource } from '../generators/index.ts';
import type { ProbeBudget } from '../tasks/index.ts';

/** What the media probe tells about a linked file; throws ApiError for files that break a rule. */
export interface ResolvedInput {
  durationSeconds?: number;
  format: string;
  sizeBytes: number;
}
/**
 * Files a URL field of a library links to, in the catalog's terms: formats, largest size (bytes) and, for
 * recordings, longest length (seconds). The list responses show them as `limits.accepted_files`.
 */
export type LinkedFiles = Pick<InputRule, 'formats' | 'maxBytes' | 'maxSeconds'>;
/**
 * Probes the file behind a link of field `field` (`image_urls.0`, `source_url`) within the request's
 * budget: its signal ends the download (time up, another link refused), its meter counts the bytes.
 */
export type InputResolver = (
  url: string,
  field: string,
  accepted: LinkedFiles,
  budget?: ProbeBudget,
) => Promise<ResolvedInput>;

/** The state a record takes when its pending step ends (applied lazily on read). */
export interface PendingStep<S extends string = string> {
  status: S;
  /** Public fields to merge (for example a singing voice's phrase). */
  data?: Record<string, unknown>;
  /** The record's name from then on (a verified singing voice). */
  name?: string;
  error?: string;
}

/** A pending step only the generator can end (`LibraryPolledSettlement`): asked at `ready_at`. */
export interface PolledStep {
  /** `create` (learning after the 201) or the step's name (`verify`). */
  step: string;
  /** The upstream id the generator is asked about. */
  upstreamId: string;
  /** Time between two questions while the step runs (milliseconds). */
  pollMs: number;
}

/** Our bookkeeping of a record, never shown. */
export interface PrivateData {
  /** What the record becomes at `ready_at` (with `poll`: when the generator says the step ended well). */
  next?: PendingStep;
  /** Present when the generator, not the clock, ends the pending step. */
  poll?: PolledStep;
  /** The provider's id of the record (`LibraryCreated.upstreamId`); tasks naming it get it as `upstream_id`. */
  upstream_id?: string;
  /**
   * The channel that made the record (CONTRACT §11): its later steps and the tasks naming it go there
   * only. Absent for records the simulator keeps.
   */
  channel?: string;
  /**
   * Set on the deleted stand-in of a creation that failed without its outcome known: whatever the channel
   * made of it is found by the record id and deleted there (upstream-deletes.ts).
   */
  unanswered?: boolean;
  [key: string]: unknown;
}

/** A library record as the service works with it (JSON columns parsed). */
export interface StoredRecord {
  id: string;
  accountId: string;
  model: string;
  /** Path segment of the record's library (`LibraryDecl.segment`). */
  library: string;
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
  /** The provider's ids of the file the record is made from, when kept (a persona's song version). */
  source?: LibrarySource;
}

/** Code of a refusal by the generator of a library creation (reference: 502). */
export type CreateFailedCode = Exclude<Parameters<typeof errors.createFailed>[0], 'helper_failed'>;
/** Code of a refusal of a task that names a library item (CONTRACT §7: 422). */
export type ItemCode = Parameters<typeof errors.libraryItem>[0];

/** What a task may be told about the items of a kind it names (CONTRACT §7, 422 before any hold). */
export interface ItemRefusals {
  /** An unknown, deleted or foreign item, or one of another library. */
  missing: ItemCode;
  /** An item that is not `ready` (kinds with states only). (Default: `missing`) */
  notReady?: ItemCode;
}

/**
 * Records that keep learning after the 201 (music styles, singing voices): `initial` for about
 * `typicalMs`, then `succeeds`, or `failed` with the generator's reason.
 */
export interface Learning<S extends string> {
  /** State of a new record while the generator learns. */
  initial: S;
  /** How long learning typically takes (milliseconds at SIM_SPEED 1; the simulator divides by it). */
  typicalMs: number;
  /** State once learning succeeded. */
  succeeds: S;
  /**
   * Public fields the record gains with `succeeds` (a singing voice's phrase), asked of the generator
   * at creation.
   */
  gains?(ctx: CreateContext, plan: CreationPlan): Promise<Record<string, unknown>>;
}

/**
 * A step the caller takes on an existing record (a singing voice's verify and retry): allowed only in
 * state `from`, refused elsewhere with `refused()` (409). The record moves to `to`; a step that waits on
 * the generator ends after about `typicalMs` in `succeeds`, or in `failed`.
 */
export interface RecordStep<S extends string> {
  from: S;
  to: S;
  /** How long the generator typically takes to end the step (milliseconds at SIM_SPEED 1). */
  typicalMs?: number;
  succeeds?: S;
  refused: () => ApiError;
}

/** What docs/libraries.md says of a kind beyond what the declaration's data shows. */
export interface LibraryNotes {
  /** Rules between body fields the schema cannot show (one sentence or more). */
  rules?: string;
  /** Decisions where the reference and CONTRACT §7 leave a choice open. */
  decisions?: string;
}

/**
 * One kind of library: the only place that states its address, states, refusal codes, learning time, file
 * rules and bounds. Write it with `defineLibrary` and add it to `LIBRARIES` (registry.ts).
 */
export interface LibraryDecl<B = unknown, Seg extends string = string, S extends string = string> {
  /** Key of the owning model (CONTRACT §2). */
  model: string;
  /** Last path segment; also the list field's name (CONTRACT §7). */
  segment: Seg;
  /** One line for the OpenAPI summary. */
  title: string;
  /** Creation body: a strict object, any other field is 422 invalid_request (CONTRACT §7). */
  body: z.ZodType<B>;
  /** A record as the API shows it (OpenAPI). */
  record: z.ZodType;
  /**
   * Bounds shown in the list response's `limits` beside `accepted_files`, in order; those of body fields
   * are read from `body` with `boundsOf` (limits.ts), never written twice.
   */
  limits: Readonly<Record<string, unknown>>;
  /**
   * Every URL field of the creation body and the files it accepts (shown as `limits.accepted_files`). Each
   * link goes through the guarded probe before `prepare`: private and metadata addresses, wrong types,
   * sizes and lengths are refused (CONTRACT §6, issue 10.16).
   */
  files: Readonly<Record<string, LinkedFiles>>;
  /** Files of URL fields of later steps (a singing voice's `recording_url`), shown in `accepted_files` too. */
  laterFiles?: Readonly<Record<string, LinkedFiles>>;
  /** Further fields of the list response (`tags` of elements, `presets` of omni voices). */
  listExtras?: Readonly<Record<string, unknown>>;
  /**
   * States of a record, when records carry `status` (CONTRACT §7: "records that learn or wait carry
   * status"); absent for records saved while the request waits that have none (elements, personas).
   */
  states?: readonly S[];
  /** Ready items anyone may name in tasks beside their own (omni voice presets); listed as `presets`. */
  presets?: readonly { id: string; name?: string }[];
  /** Code of a refusal by the generator (reference: 502). */
  failCode: CreateFailedCode;
  /** Codes of a task naming an item it cannot use. */
  refusals: ItemRefusals;
  /** Present for records that keep learning after the 201 (music styles, singing voices). */
  learns?: Learning<S>;
  /** Steps the caller takes on a record after creation, by name (routes of their own). */
  steps?: Readonly<Record<string, RecordStep<S>>>;
  /** For docs/libraries.md. */
  notes: LibraryNotes;
  /** Checks that need the database or the files, then the record's name, data and unique key. */
  prepare(body: B, ctx: CreateContext): Promise<CreationPlan>;
  /** Refusal for a taken unique key (409). */
  taken?(plan: CreationPlan): ApiError;
  /** Public fields of a record beyond id, name, status, error and created_at. (Default: its data) */
  view?(record: StoredRecord): Record<string, unknown>;
}
