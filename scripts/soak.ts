/**
 * `npm run soak`: tasks over every model with random outcomes and cancels while API and worker
 * processes are killed with SIGKILL and started again at random; at the end every task must be final,
 * the money whole (CONTRACT §5) and every result file downloadable. Prints the figures and exits 1 on
 * any broken invariant. Options: scripts/soak/options.ts (`--db sqlite|postgres`, `--tasks`, `--seed` …).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../src/db/index.ts';
import { createRng } from '../src/generators/simulator/media/seed.ts';
import {
  allTasks,
  checkDownloads,
  checkLedgerNow,
  checkMoney,
  checkOutcomes,
  jobsHeldBy,
  waitAllFinal,
} from './soak/checks.ts';
import { Client } from './soak/client.ts';
import { ADMIN_TOKEN, Cluster, sleep } from './soak/cluster.ts';
import { readSoakOptions } from './soak/options.ts';
import { INTENTS, makeAccounts, runTraffic } from './soak/traffic.ts';

const options = readSoakOptions(process.argv.slice(2), process.env);
const started = Date.now();
const seconds = (): string => ((Date.now() - started) / 1000).toFixed(1);
console.log(
  `soak: ${options.tasks} tasks on ${options.db}, ${options.apis} API and ${options.workers} worker ` +
    `processes, ${options.accounts} accounts, a kill every ~${options.killEverySeconds} s, seed ${options.seed}`,
);

const cluster = await Cluster.start(options);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-soak-files-'));
const db = createDb(cluster.databaseUrl);
const broken: string[] = [];
let exitCode = 1;
try {
  const client = new Client(() => cluster.liveApis(), createRng(options.seed, 'client'));
  const accounts = await makeAccounts(client, options.accounts, scratch);
  console.log(`soak: ${seconds()} s, accounts ready; load and kills start`);
  // The kills go on until every task is final, so runs are cut while queued, running and finishing.
  let allFinal = false;
  // Which tasks each kill cut off, to tell the worker's crash guards from real failures at the end.
  const interrupted = new Map<string, number>();
  const beforeKill = async (pid: number): Promise<void> => {
    for (const id of await jobsHeldBy(db, pid)) interrupted.set(id, (interrupted.get(id) ?? 0) + 1);
  };
  const chaos = cluster.chaos(
    createRng(options.seed, 'chaos'),
    options.killEverySeconds,
    () => allFinal,
    beforeKill,
  );
  // The money must be whole at every moment: a snapshot check every two seconds until the end.
  let midRunChecks = 0;
  const watch = (async () => {
    while (!allFinal) {
      broken.push(...(await checkLedgerNow(db)).map((b) => `during the run: ${b}`));
      midRunChecks++;
      await sleep(2_000);
    }
  })().catch((error: unknown) => {
    broken.push(`the ledger check during the run stopped: ${String(error)}`);
  });
  const traffic = await runTraffic({
    client,
    rng: createRng(options.seed, 'traffic'),
    accounts,
    total: options.tasks,
    concurrency: options.concurrency,
    spreadMs: (options.durationSeconds ?? 0) * 1000,
  });
  console.log(`soak: ${seconds()} s, ${traffic.created.length} tasks created; waiting for every task to end`);
  const settled = await waitAllFinal(db, options.settleSeconds * 1000);
  allFinal = true;
  await Promise.all([chaos, watch]);
  if (!settled) broken.push(`tasks still unfinished after ${options.settleSeconds} s`);
  // Processes that crashed on their own while the tasks ended are started again for the checks.
  await cluster.reviveAll();
  const tasks = await allTasks(db);
  const money = await checkMoney(db, tasks, client, ADMIN_TOKEN);
  broken.push(...money.broken);
  const outcomes = checkOutcomes(traffic.created, tasks, interrupted);
  broken.push(...outcomes.broken);
  const downloads = await checkDownloads(client, accounts, tasks);
  broken.push(...downloads.broken);
  const unexpected = Object.entries(traffic.figures.refusals).filter(([code]) => code !== 'too_many_active');
  for (const [code, count] of unexpected) broken.push(`${count} creations refused with ${code}`);
  broken.push(...client.figures.serverErrors.map((e) => `server error: ${e}`));
  broken.push(...traffic.figures.cancelProblems.map((c) => `cancel: ${c}`));
  broken.push(...cluster.figures.crashes.map((c) => `crash: ${c}`));

  const runs = cluster.runsPerTask();
  const byStatus = Map.groupBy(tasks, (t) => t.status);
  const byIntent = Map.groupBy(traffic.created, (t) => t.intent);
  const figures = {
    seconds: Number(seconds()),
    tasks: tasks.length,
    by_status: Object.fromEntries([...byStatus].map(([s, list]) => [s, list.length])),
    by_intent: Object.fromEntries(INTENTS.map((i) => [i, byIntent.get(i)?.length ?? 0])),
    by_model: Object.fromEntries(
      [...Map.groupBy(traffic.created, (t) => t.model)].map(([m, list]) => [m, list.length]),
    ),
    cancels: traffic.figures.cancels,
    // Tasks failed by the worker's timeout or attempt guard after kills cut them off (not broken).
    failed_after_kills: outcomes.failedAfterKills,
    tasks_cut_off_by_kills: interrupted.size,
    kills: cluster.figures.kills,
    killed: cluster.figures.killed,
    restarts: cluster.figures.restarts,
    crashes: cluster.figures.crashes.length,
    creation_replays: traffic.figures.replays,
    creations_abandoned: traffic.figures.abandoned,
    refusals: traffic.figures.refusals,
    requests_resent_after_kill: client.figures.networkRetries,
    rate_limited_waits: client.figures.limited,
    runs_started_twice: [...runs.values()].filter((n) => n > 1).length,
    files_downloaded: downloads.files,
    checks: {
      // The soak's own accounts and the demo account of the first start.
      accounts: money.accounts,
      tasks_checked: tasks.length,
      ledger_snapshots_during_run: midRunChecks,
      broken: broken.length,
    },
  };
  console.log(JSON.stringify(figures, null, 2));
  exitCode = broken.length === 0 ? 0 : 1;
} catch (error) {
  broken.push(`the run stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await db.close();
  await cluster.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
}
if (broken.length > 0) console.error(`process output: ${cluster.logFile}`);
else fs.rmSync(cluster.logFile, { force: true });
for (const line of broken.slice(0, 50)) console.error(`BROKEN: ${line}`);
if (broken.length > 50) console.error(`… and ${broken.length - 50} more`);
console.log(exitCode === 0 ? 'soak: every invariant held' : `soak: ${broken.length} broken invariants`);
process.exit(exitCode);
