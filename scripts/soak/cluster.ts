/**
 * The processes of a soak run — API processes and workers, as production runs them — on a fresh
 * database, and the chaos that kills them with SIGKILL and starts them again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Rng } from '../../src/generators/simulator/media/seed.ts';
import { exited, freePort, type Server, startServer, startWorker } from '../../test/processes.ts';
import type { SoakOptions } from './options.ts';

export const ADMIN_TOKEN = 'soak-admin-token-0123456789';

/** One process slot: a role and its environment; `server` is the live child, null while it is down. */
export interface Slot {
  name: string;
  role: 'api' | 'worker';
  /** Environment of the process; an API's PORT changes when its old port was taken while it was down. */
  env: Record<string, string>;
  server: Server | null;
  /** Set just before the chaos kills it, so its exit is not counted as a crash. */
  killing: boolean;
}

export interface ClusterFigures {
  kills: number;
  /** Kills by process role. */
  killed: { api: number; worker: number };
  restarts: number;
  /** Exits nobody asked for, with the end of the process's output. */
  crashes: string[];
}

export class Cluster {
  readonly slots: Slot[] = [];
  readonly figures: ClusterFigures = { kills: 0, killed: { api: 0, worker: 0 }, restarts: 0, crashes: [] };
  /** DATABASE_URL of the run, for the checks that read the database directly. */
  readonly databaseUrl: string;
  /** Output of every process that ended, kept after the run (printed when an invariant broke). */
  readonly logFile = path.join(os.tmpdir(), `gta-soak-${process.pid}.log`);
  readonly #dir: string;
  readonly #drop: () => Promise<void>;
  #stopped = false;

  private constructor(dir: string, databaseUrl: string, drop: () => Promise<void>) {
    this.#dir = dir;
    this.databaseUrl = databaseUrl;
    this.#drop = drop;
  }

  /** Makes a fresh database (and storage prefix) and starts the processes; the first API migrates. */
  static async start(options: SoakOptions): Promise<Cluster> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-soak-'));
    const suffix = `${process.pid}_${Date.now().toString(36)}`;
    let databaseUrl = `sqlite:${path.join(dir, 'service.db')}`;
    let drop = async (): Promise<void> => {};
    if (options.db === 'postgres') {
      const name = `gta_soak_${suffix}`;
      await onServer(options.serverUrl, (client) => client.query(`create database ${name}`));
      const url = new URL(options.serverUrl);
      url.pathname = `/${name}`;
      databaseUrl = url.toString();
      // `with (force)` ends the sessions of processes killed while connected.
      drop = async () => {
        await onServer(options.serverUrl, (c) => c.query(`drop database if exists ${name} with (force)`));
      };
    }
    const storage = process.env.TEST_STORAGE_URL?.trim();
    const common = {
      DATA_DIR: dir,
      DATABASE_URL: databaseUrl,
      STORAGE_URL:
        options.db === 'postgres' && storage
          ? storage.replace('?', `/soak-${suffix}?`)
          : `file://${path.join(dir, 'files')}`,
      ADMIN_TOKEN,
      SIM_SPEED: String(options.simSpeed),
      // Short, so a killed worker's tasks move on within seconds; long enough for a CPU-starved worker
      // on a small machine to renew its leases in time.
      JOB_LEASE: '8s',
      LOG_LEVEL: 'warn',
      SIM_CALL_LOG: path.join(dir, 'calls.log'),
      RENDER_THREADS: '1',
    };
    const cluster = new Cluster(dir, databaseUrl, drop);
    try {
      for (let i = 0; i < options.apis; i++) {
        const port = String(await freePort());
        // SQLite runs as `npm start` does (a worker inside the API); PostgreSQL as deployment.md scales out.
        const worker = options.db === 'sqlite' ? 'on' : 'off';
        cluster.slots.push(cluster.#slot(`api-${i + 1}`, 'api', { ...common, PORT: port, WORKER: worker }));
      }
      for (let i = 0; i < options.workers; i++)
        cluster.slots.push(cluster.#slot(`worker-${i + 1}`, 'worker', { ...common }));
      for (const slot of cluster.slots) await cluster.#launch(slot);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** Base URLs of the API processes that are up now. */
  liveApis(): string[] {
    return this.slots.flatMap((s) => (s.role === 'api' && s.server ? [s.server.base] : []));
  }

  /** Lines of the simulator's call log: one per started run. */
  runsPerTask(): Map<string, number> {
    const counts = new Map<string, number>();
    const file = path.join(this.#dir, 'calls.log');
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    for (const id of text.split('\n').filter(Boolean)) counts.set(id, (counts.get(id) ?? 0) + 1);
    return counts;
  }

  /**
   * Kills a random process with SIGKILL every `meanSeconds` on average (0.5× to 1.5×), leaves it down
   * for up to two seconds and starts it again, until `until()` says so; `beforeKill` sees the victim's
   * process id first. Resolves when the chaos ends with
   * every process up.
   */
  async chaos(
    rng: Rng,
    meanSeconds: number,
    until: () => boolean,
    beforeKill: (pid: number) => Promise<void> = async () => {},
  ): Promise<void> {
    while (meanSeconds > 0 && !until() && !this.#stopped) {
      await sleep(rng.range(0.5, 1.5) * meanSeconds * 1000);
      if (until() || this.#stopped) break;
      await this.reviveAll();
      const slot = rng.pick(this.slots);
      if (!slot.server) continue;
      await beforeKill(slot.server.child.pid ?? 0).catch(() => {});
      slot.killing = true;
      slot.server.child.kill('SIGKILL');
      await exited(slot.server.child);
      slot.server = null;
      slot.killing = false;
      this.figures.kills++;
      this.figures.killed[slot.role]++;
      await sleep(rng.range(0, 2_000));
      await this.#relaunch(slot);
    }
    await this.reviveAll();
  }

  /** Starts every process that is down (after a crash nobody asked for). */
  async reviveAll(): Promise<void> {
    for (const slot of this.slots) if (!slot.server && !this.#stopped) await this.#relaunch(slot);
  }

  /** Starts a process again; one that cannot start at all is a finding, not the end of the run. */
  async #relaunch(slot: Slot): Promise<void> {
    try {
      await this.#launch(slot);
      this.figures.restarts++;
    } catch (error) {
      this.figures.crashes.push(`${slot.name} could not start again: ${String(error)}`);
    }
  }

  /** SIGTERM to every process (SIGKILL after 10 s), then drops the database and the folder. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(
      this.slots.map(async (slot) => {
        const child = slot.server?.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        slot.killing = true;
        child.kill('SIGTERM');
        const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited(child);
        clearTimeout(forced);
      }),
    );
    await this.#drop().catch((error: unknown) => console.error(`could not drop the database: ${error}`));
    fs.rmSync(this.#dir, { recursive: true, force: true });
  }

  #slot(name: string, role: Slot['role'], env: Record<string, string>): Slot {
    return { name, role, env, server: null, killing: false };
  }

  /**
   * Starts the slot's process; a start that fails is tried twice more. An API moves to a new port then:
   * while it was down the kernel may have given its port to an outgoing connection (EADDRINUSE).
   */
  async #launch(slot: Slot): Promise<void> {
    let server: Server | undefined;
    for (let attempt = 1; !server; attempt++) {
      try {
        server = await (slot.role === 'api' ? startServer(slot.env) : startWorker(slot.env));
      } catch (error) {
        if (attempt >= 3) throw error;
        if (slot.role === 'api') slot.env = { ...slot.env, PORT: String(await freePort()) };
      }
    }
    slot.server = server;
    server.child.on('exit', (code, signal) => {
      fs.appendFileSync(
        this.logFile,
        `\n== ${slot.name} (pid ${server.child.pid}) exited: ${code ?? signal}\n${server.output()}`,
      );
      if (slot.killing || this.#stopped) return;
      slot.server = null;
      this.figures.crashes.push(`${slot.name} exited (${code ?? signal}):\n${server.output().slice(-2_000)}`);
    });
  }
}

async function onServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
