/**
 * Table types of the database. Timestamps are ISO 8601 UTC strings (`toISOString()`), which sort
 * correctly as text on both SQLite and PostgreSQL; booleans are 0/1 integers on both.
 */

export interface AccountsTable {
  id: string;
  name: string;
  /** Sum of posted credits (kopecks). */
  credited_minor: number;
  /** Sum of captured holds (kopecks). */
  captured_minor: number;
  /** Sum of pending holds (kopecks). */
  held_minor: number;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  /** First characters of the key, shown to people to tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole key (hex); the plain key is never stored. */
  key_hash: string;
  /** JSON array of model keys, or null for every model. */
  models: string | null;
  daily_limit_minor: number | null;
  created_at: string;
  revoked_at: string | null;
}

export type LedgerEntryType = 'credit' | 'hold' | 'capture' | 'void';

/** Append-only log of money movements; the operator's ledger view. */
export interface LedgerEntriesTable {
  id: string;
  account_id: string;
  type: LedgerEntryType;
  amount_minor: number;
  task_id: string | null;
  key_id: string | null;
  /** Operator's reference of a credit; unique per account so a credit happens once. */
  reference: string | null;
  created_at: string;
}

export type TransferStatus = 'pending' | 'posted' | 'voided';

/** Two-phase transfer of a task's price: pending (held) → posted (captured) or voided, exactly once. */
export interface TransfersTable {
  /** The task id is the transfer's identity. */
  id: string;
  account_id: string;
  key_id: string | null;
  amount_minor: number;
  status: TransferStatus;
  created_at: string;
  settled_at: string | null;
}

export interface ModelSettingsTable {
  key: string;
  available: number;
  /** Simultaneous unfinished tasks of this model per account; null = service default. */
  max_active: number | null;
  updated_at: string;
}

export type TaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';

export interface TasksTable {
  id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  mode: string;
  status: TaskStatus;
  /** JSON of the accepted settings, defaults filled in. */
  settings: string;
  /** JSON of the probed input files the price was computed from. */
  inputs: string;
  price_minor: number;
  currency: string;
  progress: number;
  caption: string | null;
  /** JSON array of strings. */
  texts: string | null;
  /**
   * JSON of what the views show of the result files (`ArtifactFacts[]`, tasks/task-view.ts), written with
   * the move to succeeded (migration 0027); null before it and on tasks that did not succeed.
   */
  artifact_views: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  files_expire_at: string | null;
  files_expired: number;
  /** The generator's handle of the run, kept so a restarted worker resumes instead of starting over. */
  provider_ref: string | null;
  /**
   * Key of the run, recorded before the generator is asked to start it (`<task id>/<run number>`); with no
   * `provider_ref` beside it, a resuming worker looks the run up by this key instead of starting another.
   */
  run_key: string | null;
  /**
   * When the sweeper next asks the provider to cancel the upstream task of a task its caller canceled;
   * null when no cancel is owed (migration 0025, src/worker/upstream-cancels.ts).
   */
  upstream_cancel_at: string | null;
  /** Name of the channel the run is on (GENERATORS_FILE); null on the default generator or while queued. */
  channel: string | null;
  /** The channel a failed run left; its retry prefers another channel. */
  avoid_channel: string | null;
  /** JSON `{ amount, currency }`: what the provider reported the run cost, where it does. */
  upstream_cost: string | null;
  /** Counts every change a caller can see (status, progress): event stream ids, long-poll wake-ups. */
  revision: number;
  /** The task's own webhook (CONTRACT §12), or null. */
  webhook_url: string | null;
  /** JSON array of the event types sent to `webhook_url`; null with no webhook. */
  webhook_events: string | null;
}

/** Durable queue: one row per task that still needs running; deleted with the task's final state. */
export interface JobsTable {
  /** Deterministic `run-task:<task id>`, so enqueueing twice is harmless. */
  id: string;
  task_id: string;
  run_at: string;
  locked_by: string | null;
  /** Lease: after this moment another worker may claim the job. */
  locked_until: string | null;
  attempts: number;
}

export interface ArtifactsTable {
  task_id: string;
  idx: number;
  kind: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  caption: string;
  storage_key: string;
  /** JSON `{ provider, ids }`: the provider's ids of the file (`UpstreamArtifact`); null when none. */
  upstream: string | null;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  /** SHA-256 of the canonical request. */
  request_hash: string;
  state: 'processing' | 'done';
  response_status: number | null;
  resource_id: string | null;
  created_at: string;
  /** A processing row past this moment was abandoned (crash) and may be taken over. */
  locked_until: string;
  /** Random token of the request holding the claim; only it may complete or release the row. */
  claim_token: string | null;
}

/** A file uploaded with POST /v1/files; its direct link is `/files/<token>`. */
export interface UploadsTable {
  id: string;
  account_id: string;
  /** Unguessable part of the direct link (works without an API key until `expires_at`). */
  token: string;
  filename: string;
  content_type: string;
  format: string;
  kind: string;
  size_bytes: number;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  storage_key: string;
  created_at: string;
  expires_at: string;
  deleted_at: string | null;
  /**
   * `<task id>/<index>` when the row only lends an artifact's bytes to a provider for one run (a direct
   * link the provider can fetch without a key); null for the caller's own uploads. A lent row is no
   * upload of the caller's: not listed, not counted against the quota, its bytes never deleted with it.
   */
  source_artifact: string | null;
}

/** A record of any personal library (reference "Library records", CONTRACT §7). */
export interface LibraryRecordsTable {
  id: string;
  account_id: string;
  /** Key of the model that owns the library. */
  model: string;
  /** Path segment of the library at the model (`LibrarySegment` of src/libraries). */
  library: string;
  name: string | null;
  status: string;
  /** JSON object: the record's public fields beyond id, name, status, error and created_at. */
  data: string;
  /** JSON object: our bookkeeping (source task, phrase history, the pending step's outcome). */
  private: string;
  /** Unique among the live records of the library and account (element name, persona song version). */
  unique_key: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  /** When the pending step completes; applied on read. */
  ready_at: string | null;
  deleted_at: string | null;
  /**
   * When the provider that keeps a copy of this deleted record is next asked to delete it (migration
   * 0020); null when nothing is owed (no provider copy, or it is gone).
   */
  upstream_delete_at: string | null;
}

/**
 * An upload a live library record names (migration 0026): written with the record, removed with its
 * deletion. The sweeper keeps a held upload and its direct link past `expires_at`.
 */
export interface LibraryUploadsTable {
  record_id: string;
  upload_id: string;
}

/** One call of a free helper, for the hourly limit (reference "Limits"). */
export interface HelperCallsTable {
  id: string;
  account_id: string;
  at: string;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Shared state of one channel of GENERATORS_FILE (CONTRACT §11), one row per channel name. */
export interface ChannelStatesTable {
  name: string;
  /** 1 or 0; a channel out of credit is disabled until the operator enables it. */
  enabled: number;
  circuit: CircuitState;
  /** Transient failures in a row; 5 open the circuit. */
  consecutive_failures: number;
  /** When the circuit last opened. */
  opened_at: string | null;
  succeeded: number;
  failed: number;
  last_error: string | null;
  updated_at: string;
}

/** A run's callback token (CONTRACT §11), kept as its hash; the plain token is only in the callback URL. */
export interface CallbackTokensTable {
  /** SHA-256 of the token (hex). */
  token_hash: string;
  /** Channel the token was made for; a callback under another channel's path is unknown. */
  channel: string;
  run_key: string;
  task_id: string;
  created_at: string;
}

/** A JSON body a provider posted to a run's callback URL, oldest first by `id`. */
export interface CallbackBodiesTable {
  /** UUID v7: sorts by arrival. */
  id: string;
  run_key: string;
  channel: string;
  /** The body as JSON text. */
  body: string;
  received_at: string;
}

/** An account's webhook endpoint (CONTRACT §12); soft-deleted so its deliveries keep their history. */
export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  description: string | null;
  /** `whsec_` + base64 of the signing key. */
  secret: string;
  /** The secret before the last rotation, still signing until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  deleted_at: string | null;
}

/** The account's default secret, signing the webhooks tasks name themselves; made on first use. */
export interface WebhookSecretsTable {
  account_id: string;
  secret: string;
  created_at: string;
}

export type WebhookDeliveryState = 'pending' | 'succeeded' | 'failed';

/** One event for one receiver: a durable, leased queue entry and its log. `id` is the `webhook-id`. */
export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  /** The endpoint, or null for a task's own `webhook_url`. */
  webhook_id: string | null;
  task_id: string | null;
  /** The library record of a `library.*` event. */
  record_id: string | null;
  type: string;
  url: string;
  /**
   * The URL's host and port (`receiverOf`), whose deliveries share one receiver's part of the sender's
   * slots; null only on rows written before it was kept.
   */
  receiver: string | null;
  /** The JSON body exactly as sent, frozen when the event happened. */
  body: string;
  state: WebhookDeliveryState;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  /** When the next attempt is due; null once succeeded or failed. */
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

/** A person: the e-mail and password behind one account (CONTRACT §13). */
export interface PeopleTable {
  id: string;
  account_id: string;
  /** Lowercase. */
  email: string;
  /** `scrypt$N$r$p$salt$hash`; null until a person given by the operator sets one through a reset. */
  password_hash: string | null;
  email_confirmed_at: string | null;
  /** Saved interface language, `en` or `ru`; null follows the browser. */
  lang: string | null;
  created_at: string;
}

/** Single-use e-mail tokens, stored as SHA-256 (hex) of the value mailed. */
export interface PersonTokensTable {
  token_hash: string;
  person_id: string;
  /** `confirm` or `reset`. */
  purpose: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** Dashboard sessions, stored as SHA-256 (hex) of the cookie's value. */
export interface SessionsTable {
  token_hash: string;
  person_id: string;
  /** The session's CSRF token (sent to the page, not secret from its owner). */
  csrf: string;
  expires_at: string;
  created_at: string;
}

/** A wallet top-up: one payment at a provider (CONTRACT §14). */
export interface TopupsTable {
  /** `tp_…` */
  id: string;
  account_id: string;
  amount_minor: number;
  status: 'pending' | 'succeeded' | 'canceled';
  /** `yookassa` or `test`. */
  provider: string;
  /** The provider's payment id; the reference of the ledger's credit. */
  payment_id: string;
  confirmation_url: string;
  return_url: string;
  idempotency_key: string | null;
  cancellation_reason: string | null;
  created_at: string;
  updated_at: string;
  /**
   * When its provider's succeeded payment was found not creditable (migration 0033): left pending for the
   * operator, logged once, read back by the sweep no more.
   */
  needs_operator_at: string | null;
}

/** A payment of the test mode (`PAYMENTS=test`), moved by the Pay and Decline buttons. */
export interface TestPaymentsTable {
  id: string;
  topup_id: string;
  amount_minor: number;
  status: 'pending' | 'succeeded' | 'canceled';
  cancellation_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerEntriesTable;
  transfers: TransfersTable;
  model_settings: ModelSettingsTable;
  tasks: TasksTable;
  active_task_counts: ActiveTaskCountsTable;
  key_day_spend: KeyDaySpendTable;
  jobs: JobsTable;
  artifacts: ArtifactsTable;
  idempotency_keys: IdempotencyKeysTable;
  uploads: UploadsTable;
  library_records: LibraryRecordsTable;
  library_uploads: LibraryUploadsTable;
  helper_calls: HelperCallsTable;
  channel_states: ChannelStatesTable;
  callback_tokens: CallbackTokensTable;
  callback_bodies: CallbackBodiesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  people: PeopleTable;
  person_tokens: PersonTokensTable;
  sessions: SessionsTable;
  topups: TopupsTable;
  test_payments: TestPaymentsTable;
  epochs: EpochsTable;
  rate_limits: RateLimitsTable;
}

/**
 * Counters of rate-limiter-flexible's PostgreSQL store (migration 0004), in the layout that library expects;
 * on both engines also the marks of `ExpiringMarks` (people module), under a key prefix of their own.
 */
export interface RateLimitsTable {
  key: string;
  points: number;
  /** Epoch milliseconds (a bigint: a string when PostgreSQL returns it). */
  expire: number | string | null;
}

/**
 * Unfinished (queued or running) tasks per account and model (migration 0018), kept in the transactions
 * that create a task or move it to a final state; the active-task limit reads it.
 */
export interface ActiveTaskCountsTable {
  account_id: string;
  model: string;
  active: number;
}

/**
 * What each key spent per Moscow day (migration 0024): the amounts of its transfers created that day that
 * are pending or posted, kept by the hold and the void that change them.
 */
export interface KeyDaySpendTable {
  key_id: string;
  /** The UTC instant the Moscow day starts (ISO text). */
  day_start: string;
  spent_minor: number;
}

/** Change counters (migration 0016): `keys` goes up with every key revocation. */
export interface EpochsTable {
  name: string;
  value: number;
}
