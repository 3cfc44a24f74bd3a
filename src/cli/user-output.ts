/** Formatting and argument helpers of the user commands: money, task lines, progress, `--set` values. */
import type { Model, Task } from '#sdk';

/** `1000000` kopecks → `10000.00 RUB` (integer arithmetic: no float rounding of large balances). */
export function rubles(amountMinor: number, currency = 'RUB'): string {
  const sign = amountMinor < 0 ? '-' : '';
  const abs = Math.abs(amountMinor);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${currency}`;
}

/** One line per task for `gta tasks list`. */
export function taskLine(task: Task): string {
  return [
    task.id,
    task.status.padEnd(9),
    task.model,
    rubles(task.price.amount_minor, task.price.currency),
    task.created_at,
  ].join('  ');
}

/** The readable form of a task for `gta tasks get` and the end of `gta run`. */
export function taskDetails(task: Task): string {
  const lines = [
    `id:        ${task.id}`,
    `model:     ${task.model} (${task.mode})`,
    `status:    ${task.status}${task.status === 'running' ? ` ${task.progress}%` : ''}`,
    `price:     ${rubles(task.price.amount_minor, task.price.currency)}`,
    `created:   ${task.created_at}`,
  ];
  if (task.finished_at) lines.push(`finished:  ${task.finished_at}`);
  if (task.error) lines.push(`error:     ${task.error.code}: ${task.error.message}`);
  for (const artifact of task.result?.artifacts ?? []) {
    lines.push(`file ${artifact.index}:    ${artifact.filename} (${artifact.kind}, ${artifact.size} bytes)`);
  }
  return `${lines.join('\n')}\n`;
}

/** A progress bar redrawn in place on a terminal: `[##########----------]  50% running`. */
export function progressBar(task: Task, width = 30): string {
  const done = Math.round((task.progress / 100) * width);
  return `[${'#'.repeat(done)}${'-'.repeat(width - done)}] ${String(task.progress).padStart(3)}% ${task.status}`;
}

/**
 * A `--set key=value` pair: JSON values (numbers, booleans, null, lists, objects) are parsed, anything else
 * stays a string, so `--set n=2` is a number and `--set prompt=a cat` a string. An unquoted `@FILE` names a
 * file to upload (`file`); a JSON string is always text, so `--set 'prompt="@Image1 runs"'` starts with @.
 */
export function parseSet(pair: string): { key: string; value: unknown; file?: string } {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw new Error(`--set takes key=value, got "${pair}"`);
  const key = pair.slice(0, eq);
  const raw = pair.slice(eq + 1);
  if (/^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(raw) || /^[[{"]/.test(raw)) {
    try {
      return { key, value: JSON.parse(raw) };
    } catch {
      // Not JSON after all (`[draft` or `"quoted`): the text as it is.
    }
  }
  return raw.startsWith('@') ? { key, value: raw, file: raw.slice(1) } : { key, value: raw };
}

/** Whether `key` of the chosen mode's settings schema is a list (a `@file` link is then wrapped in one). */
export function isListSetting(model: Model, settings: Record<string, unknown>, key: string): boolean {
  const modeName = model.mode_field ? settings[model.mode_field] : undefined;
  const mode = model.modes.find((m) => m.name === modeName) ?? model.modes[0];
  return mode !== undefined && listIn(mode.settings_schema, key);
}

/**
 * Whether `schema` declares `key` a list, in its own properties or in any of its branches: the simple and
 * advanced forms of a music mode are `oneOf` branches, without properties at the top.
 */
function listIn(schema: Record<string, unknown>, key: string): boolean {
  const properties = schema['properties'] as Record<string, { type?: unknown }> | undefined;
  const type = properties?.[key]?.type;
  if (type === 'array' || (Array.isArray(type) && type.includes('array'))) return true;
  const branches = ['oneOf', 'anyOf', 'allOf'].flatMap((word) => {
    const list = schema[word];
    return Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
  });
  return branches.some((branch) => listIn(branch, key));
}
