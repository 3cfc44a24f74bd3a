import { hashKey } from '../../src/accounts/keys.ts';
import { moscowDay, randomBase62, uuidv7 } from '../../src/lib/index.ts';
import { artifactViewsJson } from '../../src/tasks/task-view.ts';
import { jobIdOf } from '../../src/tasks/transitions.ts';

/**
 * The rows of a realistic database of `size` tasks, as the service itself would have written them: the
 * bench's creation body on model-3d (the settings, price and artifacts below are copied from a task made
 * through the API), spread over many accounts and a year of time, with the transfers, ledger entries,
 * artifacts, jobs and idempotency records those tasks leave behind. Generated in time order so that the
 * ids (UUID v7 from the creation time) sort like the service's own.
 */

/** What the bench needs to know of the rows it wrote. */
export interface FilledDatabase {
  size: number;
  /** Plain API key of each account (index = account number). */
  keys: string[];
  /** The account with many tasks, for the list scenario: its key and its task ids, newest first. */
  heavy: { key: string; taskIds: string[] };
  /** Finished (succeeded) tasks of distinct accounts: the poll-a-finished-task scenario. */
  finished: Array<{ key: string; taskId: string }>;
  /** Running tasks: the poll-a-running-task scenario. */
  running: Array<{ key: string; taskId: string }>;
  /** Queued plus running tasks. */
  active: number;
  /** Rows written per table. */
  rows: Record<string, number>;
}

/** Where rows go: a batch of rows of one table (all with the same columns). */
export type RowSink = (table: string, rows: ReadonlyArray<Record<string, unknown>>) => Promise<void>;

/** The shape of the filled database. */
export interface FillPlan {
  size: number;
  accounts: number;
  /** Tasks of account 0, the heavy one the list scenario walks. */
  heavyTasks: number;
  /** The newest tasks are unfinished: queued, and the oldest `running` of them running. */
  active: number;
  running: number;
}

/** 1,000 accounts; a heavy account with half the tasks (at most 100,000); 1 % unfinished (at most 10,000). */
export function planFill(size: number, accounts = 1000): FillPlan {
  const active = Math.min(10_000, Math.max(2, Math.floor(size / 100)));
  return {
    size,
    accounts,
    heavyTasks: Math.min(100_000, Math.floor(size / 2)),
    active,
    running: Math.min(500, Math.ceil(active / 2)),
  };
}

/** Rows per batch handed to the sink (PostgreSQL: one statement each). */
const BATCH = 5000;
const DAY_MS = 86_400_000;
/** Finished tasks spread over the year before the last hour; unfinished ones over the last hour. */
const SPAN_MS = 365 * DAY_MS;
const RESULT_RETENTION_MS = 14 * DAY_MS;
const MODEL = 'model-3d';
const MODE = 'text_to_model';
const PRICE_MINOR = 1500;
const CREDIT_MINOR = 1_000_000_000_000;
const SETTINGS = JSON.stringify({
  task_type: 'text_to_model',
  model_version: 'v3.1-20260211',
  texture: false,
  pbr: false,
  texture_quality: 'standard',
  geometry_quality: 'standard',
  auto_size: false,
  quad: false,
  smart_low_poly: false,
  generate_parts: false,
  prompt: 'bench',
});
const INPUTS = JSON.stringify({ files: [], records: {} });
const ARTIFACTS = [
  { kind: 'document', filename: 'model.glb', content_type: 'model/gltf-binary', size_bytes: 186_964 },
  { kind: 'image', filename: 'preview.png', content_type: 'image/png', size_bytes: 59_235 },
] as const;
/** What a succeeded task's row keeps of its files for its views, as the move to succeeded writes it. */
const ARTIFACT_VIEWS = artifactViewsJson(ARTIFACTS.map((file, idx) => ({ ...file, idx, caption: '' })));
const CAPTION = 'model-3d v3.1-20260211 text_to_model, shape only, face_limit auto';

/** Small deterministic PRNG (mulberry32), so two fills of one size have the same shape. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Which account task `i` of `plan.size` belongs to: every task at an index evenly spaced for the heavy
 * account 0 (so its tasks span the whole year), the rest at random among the others.
 */
export function accountOf(i: number, plan: FillPlan, random: () => number): number {
  if (
    plan.heavyTasks > 0 &&
    Math.floor(((i + 1) * plan.heavyTasks) / plan.size) > Math.floor((i * plan.heavyTasks) / plan.size)
  )
    return 0;
  return 1 + Math.floor(random() * (plan.accounts - 1));
}

/** Final status of finished task `i`: 90 % succeeded, 7 % failed, 3 % canceled. */
export function finalStatusOf(i: number): 'succeeded' | 'failed' | 'canceled' {
  const r = (i * 7919) % 100;
  return r < 90 ? 'succeeded' : r < 97 ? 'failed' : 'canceled';
}

/** Writes every row through `sink`, in batches; returns what the bench needs to drive the load. */
export async function fillRows(plan: FillPlan, sink: RowSink, nowMs = Date.now()): Promise<FilledDatabase> {
  const random = prng(plan.size);
  const buffers = new Map<string, Array<Record<string, unknown>>>();
  const counts: Record<string, number> = {};
  const put = async (table: string, row: Record<string, unknown>): Promise<void> => {
    let buffer = buffers.get(table);
    if (!buffer) {
      buffer = [];
      buffers.set(table, buffer);
    }
    buffer.push(row);
    counts[table] = (counts[table] ?? 0) + 1;
    if (buffer.length >= BATCH) {
      buffers.set(table, []);
      await sink(table, buffer);
    }
  };
  const flush = async (): Promise<void> => {
    for (const [table, buffer] of buffers) if (buffer.length > 0) await sink(table, buffer);
    buffers.clear();
  };

  const start = nowMs - SPAN_MS - 3_600_000;
  const firstActive = plan.size - plan.active;
  // First pass: each task's account, so that the accounts (which the tasks reference) are written first
  // with the sums their tasks' transfers make.
  const owner = new Uint16Array(plan.size);
  const captured = new Array<number>(plan.accounts).fill(0);
  const held = new Array<number>(plan.accounts).fill(0);
  for (let i = 0; i < plan.size; i++) {
    const a = accountOf(i, plan, random);
    owner[i] = a;
    if (i >= firstActive) held[a] = (held[a] ?? 0) + PRICE_MINOR;
    else if (finalStatusOf(i) === 'succeeded') captured[a] = (captured[a] ?? 0) + PRICE_MINOR;
  }
  const accountIds: string[] = [];
  const keyIds: string[] = [];
  const keys: string[] = [];
  for (let a = 0; a < plan.accounts; a++) {
    const atMs = start - DAY_MS + a * 1000;
    const at = new Date(atMs).toISOString();
    const accountId = uuidv7(atMs);
    const keyId = uuidv7(atMs);
    const key = `gta_${randomBase62(32)}`;
    accountIds.push(accountId);
    keyIds.push(keyId);
    keys.push(key);
    await put('accounts', {
      id: accountId,
      name: `Bench scale ${a}`,
      credited_minor: CREDIT_MINOR,
      captured_minor: captured[a],
      held_minor: held[a],
      created_at: at,
    });
    await put('api_keys', {
      id: keyId,
      account_id: accountId,
      name: null,
      prefix: key.slice(0, 12),
      key_hash: hashKey(key),
      models: null,
      daily_limit_minor: null,
      created_at: at,
      revoked_at: null,
    });
    await put('ledger_entries', {
      id: uuidv7(atMs),
      account_id: accountId,
      type: 'credit',
      amount_minor: CREDIT_MINOR,
      task_id: null,
      key_id: null,
      reference: `bench-${accountId}`,
      created_at: at,
    });
  }
  // model-3d's active-task limit raised to the operator API's cap, as `npm run bench` does.
  await put('model_settings', {
    key: MODEL,
    available: 1,
    max_active: 10_000,
    updated_at: new Date(nowMs).toISOString(),
  });
  await flush();

  const heavyIds: string[] = [];
  /** The newest succeeded task of each account but the heavy one: what its client would still poll. */
  const lastSucceeded = new Map<number, string>();
  const running: FilledDatabase['running'] = [];
  /** Unfinished tasks per account, for `active_task_counts`. */
  const activeOf = new Map<number, number>();
  /** Pending and posted amounts per key and Moscow day, for `key_day_spend`. */
  const spendOf = new Map<string, { key_id: string; day_start: string; spent_minor: number }>();
  for (let i = 0; i < plan.size; i++) {
    const a = owner[i] ?? 0;
    const accountId = accountIds[a] as string;
    const keyId = keyIds[a] as string;
    const isActive = i >= firstActive;
    const createdMs = isActive
      ? nowMs - 3_600_000 + Math.floor(((i - firstActive) * 3_600_000) / plan.active)
      : start + Math.floor((i * SPAN_MS) / Math.max(1, firstActive));
    const id = uuidv7(createdMs);
    const createdAt = new Date(createdMs).toISOString();
    const status = isActive ? (i - firstActive < plan.running ? 'running' : 'queued') : finalStatusOf(i);
    const startedAt = status === 'queued' ? null : new Date(createdMs + 2000).toISOString();
    const finishedMs = createdMs + 60_000 + Math.floor(random() * 240_000);
    const finishedAt = isActive ? null : new Date(finishedMs).toISOString();
    const expireMs = finishedMs + RESULT_RETENTION_MS;
    const succeeded = status === 'succeeded';
    const runKey = status === 'queued' || status === 'canceled' ? null : `${id}/1`;
    await put('tasks', {
      id,
      account_id: accountId,
      key_id: keyId,
      model: MODEL,
      mode: MODE,
      status,
      settings: SETTINGS,
      inputs: INPUTS,
      price_minor: PRICE_MINOR,
      currency: 'RUB',
      progress: succeeded ? 100 : status === 'running' ? 40 : 0,
      caption: succeeded ? CAPTION : null,
      texts: succeeded ? '[]' : null,
      artifact_views: succeeded ? ARTIFACT_VIEWS : null,
      error_code: status === 'failed' ? 'generation_failed' : null,
      error_message: status === 'failed' ? 'bench: simulated failure' : null,
      created_at: createdAt,
      started_at: startedAt,
      finished_at: finishedAt,
      files_expire_at: succeeded ? new Date(expireMs).toISOString() : null,
      files_expired: succeeded && expireMs < nowMs ? 1 : 0,
      provider_ref: null,
      run_key: runKey,
      channel: null,
      avoid_channel: null,
      upstream_cost: null,
      revision: succeeded ? 11 : status === 'running' ? 3 : status === 'queued' ? 0 : 4,
      webhook_url: null,
      webhook_events: null,
    });
    const settled = isActive ? null : succeeded ? 'posted' : 'voided';
    await put('transfers', {
      id,
      account_id: accountId,
      key_id: keyId,
      amount_minor: PRICE_MINOR,
      status: settled ?? 'pending',
      created_at: createdAt,
      settled_at: finishedAt,
    });
    if (settled !== 'voided') {
      const dayStart = moscowDay(new Date(createdMs)).start.toISOString();
      const spend = spendOf.get(`${keyId} ${dayStart}`);
      if (spend) spend.spent_minor += PRICE_MINOR;
      else
        spendOf.set(`${keyId} ${dayStart}`, { key_id: keyId, day_start: dayStart, spent_minor: PRICE_MINOR });
    }
    await put('ledger_entries', {
      id: uuidv7(createdMs),
      account_id: accountId,
      type: 'hold',
      amount_minor: PRICE_MINOR,
      task_id: id,
      key_id: keyId,
      reference: null,
      created_at: createdAt,
    });
    if (isActive) {
      activeOf.set(a, (activeOf.get(a) ?? 0) + 1);
      await put('jobs', {
        id: jobIdOf(id),
        task_id: id,
        run_at: createdAt,
        // A running task's worker went away: its lease has run out, so a worker resumes it.
        locked_by: status === 'running' ? 'bench-gone-worker' : null,
        locked_until: status === 'running' ? new Date(createdMs + 60_000).toISOString() : null,
        attempts: status === 'running' ? 1 : 0,
      });
      if (status === 'running' && running.length < 500) running.push({ key: keys[a] as string, taskId: id });
    } else {
      await put('ledger_entries', {
        id: uuidv7(createdMs),
        account_id: accountId,
        type: succeeded ? 'capture' : 'void',
        amount_minor: PRICE_MINOR,
        task_id: id,
        key_id: keyId,
        reference: null,
        created_at: finishedAt,
      });
    }
    if (succeeded) {
      for (const [idx, file] of ARTIFACTS.entries()) {
        await put('artifacts', {
          task_id: id,
          idx,
          ...file,
          caption: '',
          storage_key: `results/${id}/${id}/${idx}`,
          upstream: null,
        });
      }
      if (a !== 0) lastSucceeded.set(a, id);
    }
    // One task in five was created with an Idempotency-Key.
    if (i % 5 === 0) {
      await put('idempotency_keys', {
        account_id: accountId,
        key: `bench-${i}`,
        request_hash: hashKey(`bench-${i}`),
        state: 'done',
        response_status: 202,
        resource_id: id,
        created_at: createdAt,
        locked_until: createdAt,
        claim_token: null,
      });
    }
    if (a === 0) heavyIds.push(id);
  }
  for (const [a, active] of activeOf) {
    await put('active_task_counts', { account_id: accountIds[a] as string, model: MODEL, active });
  }
  for (const spend of spendOf.values()) await put('key_day_spend', spend);
  await flush();
  return {
    size: plan.size,
    keys,
    heavy: { key: keys[0] as string, taskIds: heavyIds.reverse() },
    finished: [...lastSucceeded].map(([a, taskId]) => ({ key: keys[a] as string, taskId })),
    running,
    active: plan.active,
    rows: counts,
  };
}
