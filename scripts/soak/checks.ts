/**
 * The end of a soak run: wait until every task is final, then check the money and the files against the
 * database itself (CONTRACT §5) and through the API. Each check returns the broken invariants it found.
 */
import type { Db, TaskStatus } from '../../src/db/index.ts';
import type { Client } from './client.ts';
import { sleep } from './cluster.ts';
import type { Created, SoakAccount } from './traffic.ts';

const FINAL: TaskStatus[] = ['succeeded', 'failed', 'canceled'];

export interface TaskRow {
  id: string;
  account_id: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  price_minor: number;
}

/** Polls until no task is queued or running; false when `timeoutMs` ran out first. */
export async function waitAllFinal(db: Db, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await db.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('status', 'not in', FINAL)
      .executeTakeFirst();
    if (Number(open?.n ?? 0) === 0) return true;
    if (Date.now() > deadline) return false;
    await sleep(500);
  }
}

export async function allTasks(db: Db): Promise<TaskRow[]> {
  const rows = await db.db
    .selectFrom('tasks')
    .select(['id', 'account_id', 'status', 'error_code', 'error_message', 'price_minor'])
    .execute();
  return rows.map((r) => ({ ...r, price_minor: Number(r.price_minor) }));
}

/**
 * While the load runs, in one snapshot: every account's counters equal its ledger, held equals its open
 * holds (pending transfers) and available never goes below zero. Money must be whole at every moment,
 * not only at the end.
 */
export async function checkLedgerNow(db: Db): Promise<string[]> {
  return db.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const broken: string[] = [];
      const entries = await tx.selectFrom('ledger_entries').selectAll().execute();
      const transfers = await tx
        .selectFrom('transfers')
        .selectAll()
        .where('status', '=', 'pending')
        .execute();
      for (const account of await tx.selectFrom('accounts').selectAll().execute()) {
        const own = entries.filter((e) => e.account_id === account.id);
        const sum = (type: string): number =>
          own.filter((e) => e.type === type).reduce((t, e) => t + Number(e.amount_minor), 0);
        const [credited, captured, held] = [
          account.credited_minor,
          account.captured_minor,
          account.held_minor,
        ].map(Number) as [number, number, number];
        const open = transfers
          .filter((t) => t.account_id === account.id)
          .reduce((t, x) => t + Number(x.amount_minor), 0);
        const expect = (what: string, actual: number, wanted: number): void => {
          if (actual !== wanted)
            broken.push(`account ${account.id}: ${what} is ${actual}, expected ${wanted}`);
        };
        expect('credited', credited, sum('credit'));
        expect('captured', captured, sum('capture'));
        expect('held', held, sum('hold') - sum('capture') - sum('void'));
        expect('held vs open holds', held, open);
        if (credited - captured - held < 0) broken.push(`account ${account.id}: available below zero`);
      }
      return broken;
    });
}

/**
 * Money at the end: the counters equal the ledger (checkLedgerNow), nothing stays held, balance = credits
 * − captured (also as the operator API shows it), captured = the prices of the succeeded tasks; for every
 * task one hold and exactly one settlement, a capture only for a succeeded task.
 */
export async function checkMoney(
  db: Db,
  tasks: TaskRow[],
  client: Client,
  adminToken: string,
): Promise<{ accounts: number; broken: string[] }> {
  const broken = await checkLedgerNow(db);
  const entries = await db.db.selectFrom('ledger_entries').selectAll().execute();
  const accounts = await db.db.selectFrom('accounts').selectAll().execute();
  for (const account of accounts) {
    const captured = Number(account.captured_minor);
    const expect = (what: string, actual: number, wanted: number): void => {
      if (actual !== wanted) broken.push(`account ${account.id}: ${what} is ${actual}, expected ${wanted}`);
    };
    expect('held at the end', Number(account.held_minor), 0);
    const succeeded = tasks.filter((t) => t.account_id === account.id && t.status === 'succeeded');
    expect(
      'captured vs succeeded prices',
      captured,
      succeeded.reduce((t, task) => t + task.price_minor, 0),
    );
    const shown = await client.call('GET', `/admin/v1/accounts/${account.id}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const view = shown.json<{ balance_minor: number; held_minor: number }>();
    expect('balance_minor (operator API)', view.balance_minor, Number(account.credited_minor) - captured);
    expect('held_minor (operator API)', view.held_minor, 0);
  }
  const byTask = Map.groupBy(
    entries.filter((e) => e.task_id !== null),
    (e) => e.task_id as string,
  );
  for (const task of tasks) {
    const types = (byTask.get(task.id) ?? []).map((e) => e.type).sort();
    const wanted = task.status === 'succeeded' ? ['capture', 'hold'] : ['hold', 'void'];
    if (types.join() !== wanted.join())
      broken.push(
        `task ${task.id} (${task.status}): ledger ${types.join(', ')}, expected ${wanted.join(', ')}`,
      );
  }
  const jobs = await db.db.selectFrom('jobs').select('id').execute();
  if (jobs.length > 0) broken.push(`${jobs.length} jobs left behind by final tasks`);
  return { accounts: accounts.length, broken };
}

/**
 * Every task the load created exists and ended as its marker says (a cancel may come too late). A task
 * whose process was killed while it held it may also end failed by the worker's own guards: `timeout`
 * (its deadline counts from the first start) or `gave up after N attempts` (every claim is an attempt).
 * Those are counted apart; without a kill behind them they are broken.
 */
export function checkOutcomes(
  created: Created[],
  tasks: TaskRow[],
  interrupted: ReadonlyMap<string, number>,
): { failedAfterKills: number; broken: string[] } {
  const broken: string[] = [];
  let failedAfterKills = 0;
  const rows = new Map(tasks.map((t) => [t.id, t]));
  const allowed: Record<Created['intent'], string[]> = {
    succeed: ['succeeded'],
    slow: ['succeeded'],
    fail: ['failed:generation_failed'],
    refuse: ['failed:content_refused'],
    cancel: ['canceled', 'succeeded'],
  };
  for (const task of created) {
    const row = rows.get(task.taskId);
    if (!row) {
      broken.push(`task ${task.taskId} was accepted but is not in the database`);
      continue;
    }
    const outcome = row.status === 'failed' ? `failed:${row.error_code}` : row.status;
    if (allowed[task.intent].includes(outcome)) continue;
    const guard = outcome === 'failed:timeout' || /^gave up after/.test(row.error_message ?? '');
    if (guard && (interrupted.get(task.taskId) ?? 0) > 0) {
      failedAfterKills++;
      continue;
    }
    broken.push(
      `task ${task.taskId} (${task.model}, meant to ${task.intent}, held by ${interrupted.get(task.taskId) ?? 0} ` +
        `killed processes) ended ${outcome}: ${row.error_message}`,
    );
  }
  return { failedAfterKills, broken };
}

/** Tasks whose jobs a process held when it was killed (the worker id carries the process id). */
export async function jobsHeldBy(db: Db, pid: number): Promise<string[]> {
  const rows = await db.db
    .selectFrom('jobs')
    .select(['task_id', 'locked_by'])
    .where('locked_by', 'is not', null)
    .execute();
  return rows.filter((r) => r.locked_by?.includes(`-${pid}-`)).map((r) => r.task_id);
}

/** Every file of every succeeded task downloads whole through the API. */
export async function checkDownloads(
  client: Client,
  accounts: SoakAccount[],
  tasks: TaskRow[],
): Promise<{ files: number; broken: string[] }> {
  const keys = new Map(accounts.map((a) => [a.id, a.key]));
  const broken: string[] = [];
  let files = 0;
  for (const task of tasks.filter((t) => t.status === 'succeeded')) {
    const auth = { authorization: `Bearer ${keys.get(task.account_id)}` };
    const view = await client.call('GET', `/v1/tasks/${task.id}`, { headers: auth });
    const artifacts =
      view.json<{ result?: { artifacts: Array<{ size: number; download_path: string }> } }>().result
        ?.artifacts ?? [];
    if (artifacts.length === 0) broken.push(`task ${task.id} succeeded without files`);
    for (const artifact of artifacts) {
      const file = await client.call('GET', artifact.download_path, { headers: auth });
      files++;
      if (file.status !== 200 || file.body.length !== artifact.size)
        broken.push(
          `${artifact.download_path}: ${file.status}, ${file.body.length} of ${artifact.size} bytes`,
        );
    }
  }
  return { files, broken };
}
