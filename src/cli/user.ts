/**
 * `gta run|price|tasks|download|upload|balance`: the command line for API users (CONTRACT §16), a thin
 * layer over the SDK in sdk/ talking to a running service with `GTA_API_KEY` at `GTA_BASE_URL`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ApiError, Client, ConnectionError, type Task, TaskFailedError, WaitTimeoutError } from '#sdk';
import { isListSetting, parseSet, progressBar, rubles, taskDetails, taskLine } from './user-output.ts';

/** The service `npm start` serves on a fresh checkout (CONTRACT §1: 127.0.0.1:8080). */
export const DEFAULT_GTA_BASE_URL = 'http://127.0.0.1:8080';

export const USER_USAGE = `Usage: gta <command> [options]     (GTA_API_KEY, GTA_BASE_URL=${DEFAULT_GTA_BASE_URL})

  run MODEL --set key=value … [--out DIR] [--timeout SECONDS]
                                  price, create, follow the progress, download the files into DIR
  price MODEL --set key=value …   what the task would hold, and the money available
  tasks list [--status S] [--model M] [--limit N]
  tasks get ID
  tasks cancel ID
  download ID [INDEX] [--out DIR] one result file, or all of them
  upload FILE                     a direct link for URL settings
  balance                         money available, the key's daily limit
  admin …                         operator commands (gta admin --help)

  --set key=value   numbers, true/false and JSON are parsed, other values are text;
                    key=@FILE uploads FILE and passes its link ('key="@text"' is text)
  --json            print the API's JSON instead
`;

/** A mistake in the command line (exit code 2). */
export class UserUsageError extends Error {
  override name = 'UserUsageError';
}

/**
 * A mistake `parseArgs` finds (an unknown option, an option without its value): a usage mistake too,
 * whatever its code (`ERR_PARSE_ARGS_UNKNOWN_OPTION`, `ERR_PARSE_ARGS_INVALID_OPTION_VALUE`, …).
 */
export function isParseArgsError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/** Where the commands write: stdout for results, stderr for progress and errors. */
export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Redraw progress in place (stderr is a terminal). */
  tty: boolean;
}

const OPTIONS = {
  set: { type: 'string', multiple: true },
  out: { type: 'string' },
  json: { type: 'boolean' },
  status: { type: 'string' },
  model: { type: 'string' },
  limit: { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = {
  set?: string[];
  out?: string;
  json?: boolean;
  status?: string;
  model?: string;
  limit?: string;
  timeout?: string;
};

/** Runs one user command and answers its exit code: 0 done, 1 refused or failed, 2 usage. */
export async function runUserCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const { positionals, values } = parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
    if (values.help) {
      io.out(USER_USAGE);
      return 0;
    }
    const apiKey = io.env['GTA_API_KEY'];
    if (!apiKey) throw new UserUsageError('GTA_API_KEY is not set (an API key of the service)');
    const client = new Client({ apiKey, baseUrl: io.env['GTA_BASE_URL'] || DEFAULT_GTA_BASE_URL });
    const [command, ...args] = positionals;
    return await dispatch(client, command ?? '', args, values, io);
  } catch (error) {
    return report(error, io);
  }
}

function report(error: unknown, io: CliIo): number {
  if (error instanceof UserUsageError || isParseArgsError(error)) {
    io.err(`${error.message}\n\n${USER_USAGE}`);
    return 2;
  }
  if (error instanceof TaskFailedError) {
    io.err(`task ${error.task.id} ${error.task.status}: ${error.message}\n`);
    return 1;
  }
  if (error instanceof ApiError) {
    io.err(
      `error ${error.status} ${error.code}: ${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}\n${created(error)}`,
    );
    return 1;
  }
  if (error instanceof ConnectionError || error instanceof WaitTimeoutError) {
    io.err(`error: ${error.message}\n${error instanceof ConnectionError ? created(error) : ''}`);
    return 1;
  }
  io.err(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}

/**
 * The task `run` created before the error (a key revoked, the service gone while following it): it runs on
 * and is charged like any other, so its id is what picks it up again, never a second `run` that pays twice.
 */
function created(error: ApiError | ConnectionError): string {
  const id = error.task?.id;
  return id
    ? `task ${id} was created and keeps going; follow it with gta tasks get ${id}, fetch its files with gta download ${id}\n`
    : '';
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The most arguments each command takes: one more (a second ID or FILE) is refused, never dropped unseen. */
const MOST_ARGUMENTS: Readonly<Record<string, number>> = {
  run: 1,
  price: 1,
  tasks: 2,
  download: 2,
  upload: 1,
  balance: 0,
};

/** The options each command takes besides --json: any other is refused, never ignored unseen. */
const OPTIONS_OF: Readonly<Record<string, readonly string[]>> = {
  run: ['set', 'out', 'timeout'],
  price: ['set'],
  'tasks list': ['status', 'model', 'limit'],
  'tasks get': [],
  'tasks cancel': [],
  download: ['out'],
  upload: [],
  balance: [],
};

async function dispatch(
  c: Client,
  command: string,
  args: string[],
  values: Values,
  io: CliIo,
): Promise<number> {
  const most = command === 'tasks' && args[0] === 'list' ? 1 : MOST_ARGUMENTS[command];
  if (most !== undefined && args.length > most)
    throw new UserUsageError(`unexpected argument "${args[most]}"`);
  const name = command === 'tasks' ? `tasks ${args[0]}` : command;
  const takes = OPTIONS_OF[name];
  const stray = takes && Object.keys(values).find((option) => option !== 'json' && !takes.includes(option));
  if (stray) throw new UserUsageError(`${name} does not take --${stray}`);
  switch (command) {
    case 'run':
      return run(c, need(args[0], 'MODEL'), values, io);
    case 'price': {
      const model = need(args[0], 'MODEL');
      const price = await c.price({ model, settings: await settingsOf(c, model, values.set ?? []) });
      io.out(
        values.json
          ? json(price)
          : `${rubles(price.amount_minor, price.currency)} (available ${rubles(price.available_minor, price.currency)})\n`,
      );
      return 0;
    }
    case 'tasks':
      return tasks(c, args, values, io);
    case 'download': {
      const task = await c.tasks.get(need(args[0], 'ID'));
      const index = args[1] === undefined ? undefined : wholeNumber(args[1], 'INDEX');
      const files = await download(c, task, values.out ?? '.', index);
      io.out(values.json ? json(files) : files.map((f) => `${f}\n`).join(''));
      return 0;
    }
    case 'upload': {
      const file = need(args[0], 'FILE');
      const upload = await c.files.upload(await readFile(file), { filename: path.basename(file) });
      io.out(
        values.json
          ? json(upload)
          : `${upload.url}\n${upload.id}  ${upload.kind}  ${upload.size} bytes  expires ${upload.expires_at}\n`,
      );
      return 0;
    }
    case 'balance': {
      const me = await c.me();
      if (values.json) io.out(json(me));
      else {
        const limit =
          me.daily_limit_minor === null
            ? 'no daily limit'
            : `today ${rubles(me.spent_today_minor, me.currency)} of ${rubles(me.daily_limit_minor, me.currency)}`;
        io.out(
          `${rubles(me.available_minor, me.currency)} available (key ${me.key?.prefix ?? 'none'}: ${limit})\n`,
        );
      }
      return 0;
    }
    default:
      throw new UserUsageError(command ? `unknown command "${command}"` : 'missing command');
  }
}

async function tasks(c: Client, args: string[], values: Values, io: CliIo): Promise<number> {
  const [sub, id] = args;
  if (sub === 'list') {
    const statuses = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
    const status = statuses.find((s) => s === values.status);
    if (values.status && !status) throw new UserUsageError(`--status must be one of ${statuses.join(', ')}`);
    const page = await c.tasks.list({
      ...(status ? { status } : {}),
      ...(values.model ? { model: values.model } : {}),
      ...(values.limit ? { limit: wholeNumber(values.limit, '--limit') } : {}),
    });
    io.out(values.json ? json(page) : page.tasks.map((t) => `${taskLine(t)}\n`).join(''));
    return 0;
  }
  if (sub === 'get' || sub === 'cancel') {
    const task = sub === 'get' ? await c.tasks.get(need(id, 'ID')) : await c.tasks.cancel(need(id, 'ID'));
    io.out(values.json ? json(task) : taskDetails(task));
    return 0;
  }
  throw new UserUsageError('tasks takes list, get ID or cancel ID');
}

async function run(c: Client, model: string, values: Values, io: CliIo): Promise<number> {
  // Checked before any upload, price or task: a mistaken flag costs nothing.
  const timeout = values.timeout ? wholeNumber(values.timeout, '--timeout') * 1000 : undefined;
  const settings = await settingsOf(c, model, values.set ?? []);
  const price = await c.price({ model, settings });
  io.err(
    `price ${rubles(price.amount_minor, price.currency)} (available ${rubles(price.available_minor, price.currency)})\n`,
  );
  let shown = '';
  let created: Task | undefined;
  const onUpdate = (task: Task): void => {
    created ??= task;
    const line = io.tty ? progressBar(task) : `${task.status} ${task.progress}%`;
    if (line === shown) return;
    shown = line;
    io.err(io.tty ? `\r${line}` : `${line}\n`);
  };
  // Ctrl-C stops following, never the task: it runs on (and is charged) like any other, so its id is
  // printed with the commands that pick it up again. A terminal's Ctrl-C comes twice (bin/gta.js passes its
  // own on): the listener stays until the exit, since without one the second would end the process by
  // SIGINT's default action, before the message, as `once` let it.
  let interrupting = false;
  const interrupted = (): void => {
    if (interrupting) return;
    interrupting = true;
    const id = created?.id;
    io.err(
      `${io.tty ? '\n' : ''}${
        id
          ? `interrupted: task ${id} keeps running; follow it with gta tasks get ${id}, stop it with gta tasks cancel ${id}`
          : 'interrupted while the task was being created: gta tasks list shows whether it was'
      }\n`,
    );
    process.exit(130);
  };
  process.on('SIGINT', interrupted);
  let task: Task;
  try {
    task = await c.tasks.run({ model, settings }, { onUpdate, ...(timeout ? { timeoutMs: timeout } : {}) });
  } catch (error) {
    if (error instanceof TaskFailedError && values.json) io.out(json(error.task));
    throw error;
  } finally {
    if (io.tty) io.err('\n');
    process.off('SIGINT', interrupted);
  }
  let files: string[];
  try {
    files = await download(c, task, values.out ?? '.');
  } catch (error) {
    // The task is paid for and its files are kept: the id is what fetches them once the cause is fixed.
    throw new Error(
      `task ${task.id} succeeded, but its files were not saved: ${(error as Error).message} (gta download ${task.id} --out DIR saves them)`,
    );
  }
  io.out(values.json ? json(task) : `${taskDetails(task)}${files.map((f) => `saved ${f}\n`).join('')}`);
  return 0;
}

/** Writes the task's files (or the one at `index`) into `dir`; answers their paths. */
async function download(c: Client, task: Task, dir: string, index?: number): Promise<string[]> {
  const artifacts = (task.result?.artifacts ?? []).filter((a) => index === undefined || a.index === index);
  if (artifacts.length === 0) {
    const what = index === undefined ? 'files' : `file ${index}`;
    throw new Error(`task ${task.id} has no ${what} (status ${task.status})`);
  }
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const artifact of artifacts) {
    // The name comes from the service: only its last segment is used, never a path it could carry.
    const target = path.join(dir, `${task.id}-${artifact.index}-${path.basename(artifact.filename)}`);
    await writeFile(target, await c.tasks.download(task.id, artifact.index));
    written.push(target);
  }
  return written;
}

/** `--set` pairs as settings; `key=@FILE` uploads FILE and passes its link (in a list where one is due). */
async function settingsOf(c: Client, model: string, pairs: string[]): Promise<Record<string, unknown>> {
  const settings: Record<string, unknown> = {};
  const uploads = new Map<string, string>();
  for (const pair of pairs) {
    let parsed: ReturnType<typeof parseSet>;
    try {
      parsed = parseSet(pair);
    } catch (error) {
      throw new UserUsageError((error as Error).message);
    }
    settings[parsed.key] = parsed.value;
    if (parsed.file === undefined) uploads.delete(parsed.key);
    else uploads.set(parsed.key, parsed.file);
  }
  if (uploads.size === 0) return settings;
  const described = await c.models.get(model);
  for (const [key, file] of uploads) {
    const upload = await c.files.upload(await readFile(file), { filename: path.basename(file) });
    settings[key] = isListSetting(described, settings, key) ? [upload.url] : upload.url;
  }
  return settings;
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UserUsageError(`missing ${what}`);
  return value;
}

function wholeNumber(value: string, what: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new UserUsageError(`${what} must be a whole number`);
  return n;
}
