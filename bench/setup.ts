import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_ADMIN_TOKEN } from './servers/messages.ts';

/** The creation request of every scenario: the cheapest model-3d run. */
export const CREATE_BODY = JSON.stringify({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt: 'bench', texture: false, pbr: false },
});

/** Enough for millions of model-3d runs (15 RUB each), so creation never runs out of money. */
const BALANCE_MINOR = 1_000_000_000_000;

/** The operator API's cap on a model's active tasks per account (PATCH /admin/v1/models). */
const MAX_ACTIVE = 10_000;

/** JSON request that must answer `expected`; returns the parsed body. */
export async function call(
  base: string,
  token: string,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  expected: number,
  payload?: unknown,
): Promise<unknown> {
  const response = await fetch(base + url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(payload === undefined
      ? {}
      : { body: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });
  const text = await response.text();
  if (response.status !== expected) {
    throw new Error(`${method} ${url}: expected ${expected}, got ${response.status}: ${text}`);
  }
  return text === '' ? null : JSON.parse(text);
}

function field(value: unknown, name: string): string {
  const found = (value as Record<string, unknown> | null)?.[name];
  if (typeof found !== 'string') throw new Error(`response has no string "${name}"`);
  return found;
}

/**
 * Through the operator API: raises model-3d's active-task limit to the cap, so that queued tasks do not
 * turn creation into 429 too_many_active while the bench piles them up.
 */
export async function raiseActiveLimit(base: string): Promise<void> {
  await call(base, BENCH_ADMIN_TOKEN, 'PATCH', '/admin/v1/models/model-3d', 200, { max_active: MAX_ACTIVE });
}

/** Through the operator API: an account with a large balance and one key. Returns the API key. */
export async function createAccount(base: string, name: string): Promise<string> {
  const account = await call(base, BENCH_ADMIN_TOKEN, 'POST', '/admin/v1/accounts', 201, { name });
  const accountId = field(account, 'id');
  await call(base, BENCH_ADMIN_TOKEN, 'POST', `/admin/v1/accounts/${accountId}/credits`, 201, {
    amount_minor: BALANCE_MINOR,
    reference: `bench-${accountId}`,
  });
  const key = await call(base, BENCH_ADMIN_TOKEN, 'POST', `/admin/v1/accounts/${accountId}/keys`, 201, {});
  return field(key, 'key');
}

/** Creates a task and polls it (as a client would, faster) until it succeeded; returns its id and view. */
export async function createFinishedTask(
  base: string,
  apiKey: string,
  timeoutMs = 30_000,
): Promise<{ id: string; body: string }> {
  const created = await call(base, apiKey, 'POST', '/v1/tasks', 202, CREATE_BODY);
  const id = field(created, 'id');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const task = await call(base, apiKey, 'GET', `/v1/tasks/${id}`, 200);
    const status = field(task, 'status');
    if (status === 'succeeded') return { id, body: JSON.stringify(task) };
    if (status === 'failed' || status === 'canceled') throw new Error(`setup task ${id} ended ${status}`);
    await sleep(50);
  }
  throw new Error(`setup task ${id} did not finish within ${timeoutMs} ms`);
}

/** Creates a task and waits until it is running (a slow simulator keeps it there); returns its id. */
export async function createRunningTask(base: string, apiKey: string, timeoutMs = 30_000): Promise<string> {
  const created = await call(base, apiKey, 'POST', '/v1/tasks', 202, CREATE_BODY);
  const id = field(created, 'id');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = field(await call(base, apiKey, 'GET', `/v1/tasks/${id}`, 200), 'status');
    if (status === 'running') return id;
    if (status !== 'queued') throw new Error(`setup task ${id} is ${status}, not running`);
    await sleep(50);
  }
  throw new Error(`setup task ${id} did not start within ${timeoutMs} ms`);
}
