/**
 * The durable queue: `jobs` rows written in the same transaction as their task. A worker claims jobs
 * with a lease (`locked_until`) and renews it while it works; a crashed worker's lease runs out and
 * another worker claims the job again.
 */
import { type Db, idsJson, type PreparedQuery, prepared, type TasksTable, type Tx } from '../db/index.ts';

export interface ClaimedJob {
  id: string;
  taskId: string;
  /**
   * Attempts that failed with a transient error so far. Claims do not count: a restart or a lease
   * take-over resumes the same run and uses up nothing.
   */
  attempts: number;
  /** The task's row as the claim read it, so the run need not read it again; null: the task is gone. */
  task: TasksTable | null;
}

/**
 * How a claim shares a worker's slots between accounts, so that one account's many long runs never keep
 * another account's task waiting for a slot (CONTRACT §3: a slow task never holds up others). The last
 * `reserve` free slots go only to accounts that hold fewer than `share` of this worker's slots; the rest
 * go in queue order. An account alone can thus use all but `reserve` slots.
 */
export interface SlotShares {
  /** This worker's running jobs per account. */
  running: ReadonlyMap<string, number>;
  /** Slots an account may hold before the reserve is closed to it. */
  share: number;
  /** Free slots kept for accounts under their share. */
  reserve: number;
}

/** A due job as a claim reads it: with its task's row when the read asked for it (null: the task is gone). */
interface DueJob {
  id: string;
  task_id: string;
  attempts?: number;
  task?: TasksTable | null;
}

type DueValues = {
  now: string;
  limit: number;
  /** Ids of jobs left out (`idsJson`). */
  exclude: string;
  /** Accounts whose jobs are left out (`idsJson`), for the variant that leaves any out. */
  capped: string;
};

/** A row of a due read that joins the jobs' tasks: the task's columns (all null when it is gone) and the job's. */
type DueRowWithTask = { [K in keyof TasksTable]: TasksTable[K] | null } & {
  due_job_id: string;
  due_task_id: string;
  due_attempts: number;
};

const dueQueries = new Map<string, PreparedQuery<DueValues, DueJob | DueRowWithTask>>();

/**
 * Due jobs: free ones that are due, oldest first, or (`leased`) ones whose lease ran out, each read from
 * its own partial index (migration 0021), so a claim never walks past the jobs other runs hold. `lock`:
 * the claim's read, locked where the engine locks rows (`skip locked`, the jobs' rows alone) and bringing
 * each job's task row, joined by its key, instead of a read of the tasks after the jobs (one round trip less
 * a claim on PostgreSQL); without it, a look for any due job. `capped`: leaving out the jobs of the accounts
 * given, which may take no more slots (through their tasks). Built once per variant.
 */
export function dueQuery(
  leased: boolean,
  lock: boolean,
  capped: boolean,
): PreparedQuery<DueValues, DueJob | DueRowWithTask> {
  const name = `${leased}/${lock}/${capped}`;
  let query = dueQueries.get(name);
  if (query === undefined) {
    query = prepared<DueValues, DueJob | DueRowWithTask>((db, value, dialect) => {
      // Without the task's columns the join is removed by both engines' planners (a left join on a key).
      let select = db
        .selectFrom('jobs')
        .leftJoin('tasks', 'tasks.id', 'jobs.task_id')
        .$if(lock, (q) =>
          q
            .selectAll('tasks')
            .select([
              'jobs.id as due_job_id',
              'jobs.task_id as due_task_id',
              'jobs.attempts as due_attempts',
            ]),
        )
        .$if(!lock, (q) => q.select(['jobs.id', 'jobs.task_id']))
        .where('jobs.run_at', '<=', value('now'))
        .where(dialect.jsonNotIn('jobs.id', value('exclude')));
      select = leased
        ? select
            .where('jobs.locked_until', 'is not', null)
            .where('jobs.locked_until', '<', value('now'))
            .orderBy('jobs.locked_until')
        : select.where('jobs.locked_until', 'is', null).orderBy('jobs.run_at');
      select = select.limit(value('limit'));
      if (capped)
        select = select.where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('tasks as capped_tasks')
                .select('capped_tasks.id')
                .whereRef('capped_tasks.id', '=', 'jobs.task_id')
                .where(dialect.jsonIn('capped_tasks.account_id', value('capped'))),
            ),
          ),
        );
      return (lock && dialect.supportsSkipLocked ? select.forUpdate('jobs').skipLocked() : select) as never;
    });
    dueQueries.set(name, query);
  }
  return query;
}

/** A claim's due read's row with its task (`dueQuery(…, lock)`) as the claim hands it on. */
function dueJobOf(row: DueRowWithTask): DueJob {
  const { due_job_id: id, due_task_id: taskId, due_attempts: attempts, ...task } = row;
  return { id, task_id: taskId, attempts, task: task.id === null ? null : (task as TasksTable) };
}

/**
 * The claim itself: the picked jobs leased to the worker (`ids`: `idsJson` of the job ids). It changes
 * every picked job, which the claim's transaction read and holds (`for update` on PostgreSQL, the write
 * lock on SQLite), so it returns nothing and goes with the COMMIT (`writeAtCommit`).
 */
const jobsClaimed = prepared<{ workerId: string; lockedUntil: string; ids: string }, never>(
  (db, value, dialect) =>
    db
      .updateTable('jobs')
      .set({ locked_by: value('workerId'), locked_until: value('lockedUntil') })
      .where(dialect.jsonIn('id', value('ids'))),
);

/**
 * Claims up to `limit` due jobs for `workerId`. PostgreSQL: `for update skip locked`, so concurrent
 * workers never take the same job (graphile-worker's approach); SQLite: the claim runs under BEGIN
 * IMMEDIATE, the database's single writer, which gives the same guarantee.
 */
export async function claimJobs(
  db: Db,
  input: {
    workerId: string;
    limit: number;
    now: Date;
    leaseMs: number;
    exclude?: readonly string[];
    /** Jobs are probably due (a backlog): skip the read that looks for any first. */
    expectDue?: boolean;
    /** How the slots are shared between accounts. (Default: in queue order alone) */
    shares?: SlotShares;
  },
): Promise<ClaimedJob[]> {
  if (input.limit <= 0) return [];
  const now = input.now.toISOString();
  const lockedUntil = new Date(input.now.getTime() + input.leaseMs).toISOString();
  // `exclude`: a job this worker is still running is never claimed twice by it, even if its lease ran out;
  // `more.seen`: the jobs already read.
  const due = (
    reader: Tx,
    leased: boolean,
    limit: number,
    lock: boolean,
    more?: { capped: readonly string[]; seen: readonly string[] },
  ): Promise<DueJob[]> => {
    const capped = more !== undefined && more.capped.length > 0;
    return dueQuery(
      leased,
      lock,
      capped,
    )(reader, {
      now,
      limit,
      exclude: idsJson([...(input.exclude ?? []), ...(more?.seen ?? [])]),
      capped: capped ? idsJson(more.capped) : '[]',
    }).then(({ rows }) => (lock ? (rows as DueRowWithTask[]).map(dueJobOf) : (rows as DueJob[])));
  };
  const dueBoth = async (tx: Tx, limit: number, more?: Parameters<typeof due>[4]): Promise<DueJob[]> => {
    const jobs = await due(tx, false, limit, true, more);
    if (jobs.length < limit) jobs.push(...(await due(tx, true, limit - jobs.length, true, more)));
    return jobs;
  };
  // Most claims of a worker that keeps up find nothing (every run's end and every new task's notice asks):
  // one read says so without the write transaction a claim takes (on SQLite the database's write lock,
  // on PostgreSQL four round trips). A job that becomes due just after the read is claimed at its notice
  // or at the next poll, as one that becomes due just after a claim would be. A backlog skips the read:
  // there it would only delay the claim (on SQLite it waits for the connection as the claim does).
  const nothingDue = async () =>
    (await due(db.db, false, 1, false)).length === 0 && (await due(db.db, true, 1, false)).length === 0;
  if (!input.expectDue && (await nothingDue())) return [];
  // On SQLite the claim shares the commit of the batches and creations that write in the same turn (a
  // commit's WAL writes cost about as much as a batch's largest statement); the jobs it locks are handed to
  // runs only once that commit is done. On PostgreSQL a transaction of its own, as before, whose reads take
  // the due jobs in their index's order whatever the statistics of `jobs` say (`orderedReads`).
  return db.dialect.groupCommit(
    db.db,
    async (tx) => {
      // The claimed tasks come with their jobs, instead of one read per run when it starts.
      const candidates = await dueBoth(tx, input.limit);
      if (candidates.length === 0) return [];
      const tasks = new Map<string, TasksTable>();
      const keepTasks = (jobs: readonly DueJob[]): void => {
        for (const job of jobs) if (job.task) tasks.set(job.task.id, job.task);
      };
      keepTasks(candidates);
      const picker = new SharePicker(input.limit, input.shares);
      const skipped = picker.pick(candidates, tasks);
      if (skipped && picker.picked.length < input.limit) {
        // Jobs of accounts under their share may wait behind the capped accounts' jobs: read past those.
        const more = await dueBoth(tx, input.limit - picker.picked.length, {
          capped: picker.capped(),
          seen: candidates.map((j) => j.id),
        });
        keepTasks(more);
        picker.pick(more, tasks);
      }
      const { picked } = picker;
      if (picked.length === 0) return [];
      const ids = idsJson(picked.map((j) => j.id));
      await db.dialect.writeAtCommit(
        tx,
        jobsClaimed.compiled(tx, { workerId: input.workerId, lockedUntil, ids }),
      );
      return picked.map((job) => ({
        id: job.id,
        taskId: job.task_id,
        attempts: job.attempts ?? 0,
        task: tasks.get(job.task_id) ?? null,
      }));
    },
    { orderedReads: true },
  );
}

/** Picks due jobs in queue order under `SlotShares`' rule. */
class SharePicker {
  readonly picked: DueJob[] = [];
  readonly #limit: number;
  readonly #shares: SlotShares | undefined;
  readonly #held = new Map<string, number>();

  constructor(limit: number, shares: SlotShares | undefined) {
    this.#limit = limit;
    this.#shares = shares;
    if (shares) for (const [account, count] of shares.running) this.#held.set(account, count);
  }

  /** Picks from `jobs` while slots are left; true when a job was passed over for its account's share. */
  pick(jobs: readonly DueJob[], tasks: ReadonlyMap<string, TasksTable>): boolean {
    let skipped = false;
    for (const job of jobs) {
      if (this.picked.length >= this.#limit) break;
      const account = tasks.get(job.task_id)?.account_id;
      const held = account === undefined ? 0 : (this.#held.get(account) ?? 0);
      const leftAfter = this.#limit - this.picked.length - 1;
      if (
        this.#shares &&
        account !== undefined &&
        held >= this.#shares.share &&
        leftAfter < this.#shares.reserve
      ) {
        skipped = true;
        continue;
      }
      this.picked.push(job);
      if (account !== undefined) this.#held.set(account, held + 1);
    }
    return skipped;
  }

  /** The accounts at or past their share, whose jobs cannot take the reserve. */
  capped(): string[] {
    const share = this.#shares?.share ?? Number.POSITIVE_INFINITY;
    return [...this.#held].filter(([, held]) => held >= share).map(([account]) => account);
  }
}

/** Renews the lease; false when the job is gone or another worker holds it now. */
export async function renewLease(
  db: Db,
  input: { jobId: string; workerId: string; until: Date },
): Promise<boolean> {
  const result = await db.db
    .updateTable('jobs')
    .set({ locked_until: input.until.toISOString() })
    .where('id', '=', input.jobId)
    .where('locked_by', '=', input.workerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Gives a job back (shutdown, or a retry later): another worker may claim it from `runAt` on. `attempts`
 * records a failed attempt (the new count); a shutdown leaves the count as it is.
 */
export async function releaseJob(
  db: Db,
  input: { jobId: string; workerId: string; runAt: Date; attempts?: number },
): Promise<void> {
  await db.db
    .updateTable('jobs')
    .set({
      locked_by: null,
      locked_until: null,
      run_at: input.runAt.toISOString(),
      ...(input.attempts === undefined ? {} : { attempts: input.attempts }),
    })
    .where('id', '=', input.jobId)
    .where('locked_by', '=', input.workerId)
    .execute();
}
