import { CREATE_BODY, createAccount, raiseActiveLimit } from '../setup.ts';

/** One simulated client: an account's API key and a task of that account to poll. */
export interface BenchClient {
  key: string;
  taskId: string;
}

/** Parallel setup calls; more only queue in the API processes' 10-connection pools. */
const SETUP_CONCURRENCY = 24;

/** POST /v1/tasks with `key`; returns the new task's id. */
async function createTask(base: string, key: string): Promise<string> {
  const response = await fetch(`${base}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: CREATE_BODY,
  });
  const text = await response.text();
  if (response.status !== 202)
    throw new Error(`POST /v1/tasks: expected 202, got ${response.status}: ${text}`);
  const id = (JSON.parse(text) as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error('POST /v1/tasks: response has no id');
  return id;
}

/**
 * Through the operator API: `count` accounts, each credited, with one key and one queued task (the
 * worker is off, so it stays queued: the state clients poll while they wait). Many accounts because the
 * production limit of 120 requests a minute per account stays on, and PostgreSQL shares it between the
 * processes: the load rotates over all of them. The calls are spread over `bases` to finish sooner.
 */
export async function createClients(
  bases: readonly string[],
  count: number,
  log: (line: string) => void,
): Promise<BenchClient[]> {
  const first = bases[0];
  if (first === undefined) throw new Error('no API process');
  // Queued tasks would otherwise soon hit model-3d's default active-task limit per account.
  await raiseActiveLimit(first);
  const clients: BenchClient[] = new Array(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const base = bases[i % bases.length] ?? first;
      const key = await createAccount(base, `Bench scale ${i}`);
      clients[i] = { key, taskId: await createTask(base, key) };
      if ((i + 1) % 500 === 0) log(`set up ${i + 1}/${count} clients`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SETUP_CONCURRENCY, count) }, worker));
  return clients;
}

/** GET of one client's task: the body the baseline then sends verbatim, so both send the same bytes. */
export async function pollBody(base: string, client: BenchClient): Promise<string> {
  const response = await fetch(`${base}/v1/tasks/${client.taskId}`, {
    headers: { authorization: `Bearer ${client.key}` },
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /v1/tasks/{id}: expected 200, got ${response.status}`);
  return text;
}
