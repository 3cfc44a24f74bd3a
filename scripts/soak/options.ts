/** Options of `npm run soak`, from `--name value` arguments (and TEST_DATABASE_URL for PostgreSQL). */
export interface SoakOptions {
  /** Tasks to create in all. (Default: 200) */
  tasks: number;
  /** Seconds over which the creations are spread evenly, or null to send them at once. (Default: null) */
  durationSeconds: number | null;
  /** Seed of every random choice (outcomes, models, kills). (Default: the current time) */
  seed: string;
  db: 'sqlite' | 'postgres';
  /** PostgreSQL server on which a fresh database is made for the run. */
  serverUrl: string;
  /** API processes. (Default: 1 on SQLite, with its in-process worker; 2 on PostgreSQL, API only) */
  apis: number;
  /** Worker processes besides the APIs. (Default: 1 on SQLite, 2 on PostgreSQL) */
  workers: number;
  accounts: number;
  /** Mean seconds between two kills; 0 kills nothing. (Default: 3) */
  killEverySeconds: number;
  /** SIM_SPEED of the processes. (Default: 200) */
  simSpeed: number;
  /** Requests creating tasks at once. (Default: 8) */
  concurrency: number;
  /** How long the end may wait for every task to be final (seconds). (Default: 300) */
  settleSeconds: number;
}

/** The server `scripts/test-services.sh start` runs (its default port and trust auth). */
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:55432/postgres';

const USAGE = `npm run soak -- [--db sqlite|postgres] [--tasks N] [--duration S] [--seed TEXT]
  [--apis N] [--workers N] [--accounts N] [--kill-every S] [--sim-speed X] [--concurrency N] [--settle S]`;

export function readSoakOptions(argv: readonly string[], env: NodeJS.ProcessEnv): SoakOptions {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i] ?? '';
    const value = argv[i + 1];
    if (!name.startsWith('--') || value === undefined) throw new Error(`bad argument "${name}"\n${USAGE}`);
    given.set(name.slice(2), value);
    i++;
  }
  const known = [
    'db',
    'tasks',
    'duration',
    'seed',
    'apis',
    'workers',
    'accounts',
    'kill-every',
    'sim-speed',
    'concurrency',
    'settle',
  ];
  for (const name of given.keys()) if (!known.includes(name)) throw new Error(`unknown --${name}\n${USAGE}`);
  const db = given.get('db') ?? 'sqlite';
  if (db !== 'sqlite' && db !== 'postgres') throw new Error(`--db must be sqlite or postgres\n${USAGE}`);
  const number = (name: string, fallback: number, min: number): number => {
    const text = given.get(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number ≥ ${min}`);
    return value;
  };
  const postgres = db === 'postgres';
  const duration = given.get('duration');
  return {
    tasks: Math.round(number('tasks', 200, 1)),
    durationSeconds: duration === undefined ? null : number('duration', 0, 1),
    seed: given.get('seed') ?? String(Date.now()),
    db,
    serverUrl: env.TEST_DATABASE_URL?.trim() || DEFAULT_SERVER_URL,
    apis: Math.round(number('apis', postgres ? 2 : 1, 1)),
    workers: Math.round(number('workers', postgres ? 2 : 1, 0)),
    accounts: Math.round(number('accounts', 6, 1)),
    killEverySeconds: number('kill-every', 3, 0),
    simSpeed: number('sim-speed', 200, 1),
    concurrency: Math.round(number('concurrency', 8, 1)),
    settleSeconds: number('settle', 300, 10),
  };
}
