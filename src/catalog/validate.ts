import { z } from 'zod';
import { plural, ruDecimal } from '../i18n/index.ts';
import { echoed } from '../lib/index.ts';
import type { ModelSpec, ModeSpec, Violation } from './model-spec.ts';

export type SettingsResult =
  | { ok: true; mode: ModeSpec; settings: Record<string, unknown> }
  | { ok: false; code: 'unknown_setting' | 'invalid_settings'; violations: Violation[] };

const en = z.locales.en().localeError;
const ru = z.locales.ru().localeError;

/** Type names in Russian: zod's Russian messages name most types in English ("ожидалось string"). */
const RU_TYPES: Readonly<Record<string, string>> = {
  string: 'строка',
  number: 'число',
  int: 'целое число',
  bigint: 'целое число',
  boolean: 'true или false',
  array: 'список',
  set: 'список',
  object: 'объект',
  record: 'объект',
  date: 'дата',
  null: 'null',
};

/** The participle agreeing with each received type's noun: получена строка, получен список, получено число. */
const RU_RECEIVED: Readonly<Record<string, string>> = {
  строка: 'получена',
  список: 'получен',
  объект: 'получен',
  дата: 'получена',
};

/** "получена строка", "получен список": what the value was, the participle agreeing with its noun. */
function ruReceived(value: unknown): string {
  const noun = ruTypeOfValue(value);
  return `${RU_RECEIVED[noun] ?? 'получено'} ${noun}`;
}

function ruTypeOfValue(value: unknown): string {
  if (value === null) return 'null';
  // A number read from text that is none (`?limit=abc`): "число" would contradict "ожидается число".
  if (Number.isNaN(value)) return 'NaN';
  if (Array.isArray(value)) return 'список';
  if (typeof value === 'boolean') return 'логическое значение';
  return RU_TYPES[typeof value] ?? typeof value;
}

/** Russian word forms for counts after "не меньше" / "не больше": 1 символа, 2 символов, 5 символов. */
const RU_COUNTED: Readonly<Record<string, readonly [string, string, string]>> = {
  string: ['символа', 'символов', 'символов'],
  array: ['элемента', 'элементов', 'элементов'],
  set: ['элемента', 'элементов', 'элементов'],
};
function ruCount(n: number, origin: string): string {
  const forms = RU_COUNTED[origin];
  return forms ? `${n} ${plural('ru', n, forms)}` : String(n);
}

/**
 * The Russian words of the type, bound and step refusals, with Russian type names, counted words and
 * fractional numbers written with a decimal comma; null for the other issues, which zod's Russian locale
 * words well enough.
 */
function russian(issue: z.core.$ZodIssue): string | null {
  if (issue.code === 'invalid_type') return ruWrongType([issue.expected], issue);
  if (issue.code === 'invalid_union') {
    // Every branch refused the value's type (a link given as a number): one refusal naming every type.
    const types = unionTypes(issue);
    if (types !== null) return ruWrongType(types, issue);
  }
  // zod's Russian words write the step with a decimal point (`кратным 0.01`).
  if (issue.code === 'not_multiple_of') {
    return `Неверное число: должно быть кратным ${ruDecimal(Number(issue.divisor))}`;
  }
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    const small = issue.code === 'too_small';
    const bound = Number(small ? issue.minimum : issue.maximum);
    if (issue.origin === 'number') {
      const word = small
        ? issue.inclusive
          ? 'не меньше'
          : 'больше'
        : issue.inclusive
          ? 'не больше'
          : 'меньше';
      return `должно быть ${word} ${ruDecimal(bound)}`;
    }
    if (issue.origin in RU_COUNTED) {
      return `${small ? 'нужно не меньше' : 'допустимо не больше'} ${ruCount(bound, issue.origin)}`;
    }
  }
  return null;
}

/** "ожидается строка или список, получено число": the types expected and what the value was. */
function ruWrongType(types: readonly string[], issue: z.core.$ZodIssue): string {
  const expected = types.map((t) => RU_TYPES[t] ?? t).join(' или ');
  const input = (issue as { input?: unknown }).input;
  return input === undefined
    ? `обязательное поле: ожидается ${expected}`
    : `ожидается ${expected}, ${ruReceived(input)}`;
}

/** Type names in English with their articles, for a field left out. */
const EN_TYPES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  set: 'a list',
  object: 'an object',
  record: 'an object',
  date: 'a date',
};

/**
 * "Required field: expected a string": a field left out, said as the Russian words say it, where zod's
 * English reads "Invalid input: expected string, received undefined"; null for a value of the wrong type.
 */
function englishMissing(types: readonly string[], issue: z.core.$ZodIssue): string | null {
  if ((issue as { input?: unknown }).input !== undefined) return null;
  return `Required field: expected ${types.map((t) => EN_TYPES[t] ?? t).join(' or ')}`;
}

/** The types a union's branches expected, when each refused the value's type alone; null otherwise. */
function unionTypes(issue: z.core.$ZodIssue): string[] | null {
  const branches = (issue as { errors?: readonly (readonly z.core.$ZodIssue[])[] }).errors;
  if (!Array.isArray(branches) || branches.length === 0) return null;
  const types: string[] = [];
  for (const branch of branches) {
    const only = branch.length === 1 ? branch[0] : undefined;
    if (only?.code !== 'invalid_type' || only.path.length > 0) return null;
    types.push(only.expected);
  }
  return types;
}

/** A field's dotted path; each name clipped as any text of the caller's a message echoes (`echoed`). */
function fieldOf(path: readonly PropertyKey[]): string {
  return path.map((name) => echoed(String(name))).join('.');
}

function localise(issue: z.core.$ZodIssue, lang: 'en' | 'ru'): string {
  // A fraction where a whole number is expected: "expected int, received number" reads as a contradiction.
  const input = (issue as { input?: unknown }).input;
  if (
    issue.code === 'invalid_type' &&
    issue.expected === 'int' &&
    typeof input === 'number' &&
    Number.isFinite(input)
  ) {
    return lang === 'ru'
      ? `ожидается целое число, получено ${ruDecimal(input)}`
      : `Invalid input: expected a whole number, received ${input}`;
  }
  if (issue.code === 'custom') {
    const params = issue.params as { ru?: string } | undefined;
    return lang === 'ru' && params?.ru ? params.ru : issue.message;
  }
  if (lang === 'ru') {
    const words = russian(issue);
    if (words !== null) return words;
  } else {
    const types = issue.code === 'invalid_type' ? [issue.expected] : unionTypes(issue);
    const missing = types === null ? null : englishMissing(types, issue);
    if (missing !== null) return missing;
  }
  if (issue.code === 'invalid_union') {
    // Every branch refused the value's type: zod's "invalid_type" words, naming every type.
    const types = unionTypes(issue);
    if (types !== null) return zodWords(en, { ...issue, code: 'invalid_type', expected: types.join(' or ') });
    // A discriminator's value matches no branch: zod's words list `'undefined'` among the values (en) or
    // say nothing of them (ru). Said here as a caller reads it: the values, and whether it may be left out.
    const options = (issue as { options?: readonly unknown[] }).options;
    if (Array.isArray(options) && options.length > 0) {
      const shown = options
        .filter((o) => o !== undefined)
        .map((o) => JSON.stringify(o))
        .join(', ');
      const optional = options.includes(undefined);
      return lang === 'ru'
        ? `ожидается одно из значений: ${shown}${optional ? ' или поле не задаётся' : ''}`
        : `expected one of ${shown}${optional ? ', or left out' : ''}`;
    }
  }
  return zodWords(lang === 'ru' ? ru : en, issue);
}

/** The words zod's locale `fn` has for an issue. */
function zodWords(fn: typeof en, issue: z.core.$ZodIssue | Record<string, unknown>): string {
  const text = fn(issue as Parameters<typeof fn>[0]);
  return typeof text === 'string'
    ? text
    : (text?.message ?? String((issue as { message?: unknown }).message));
}

/** Most unknown keys a refusal lists (each clipped by `echoed`); past them a last `…` says there are more. */
const LISTED_KEYS = 10;

function shownKeys(keys: readonly string[]): string[] {
  const shown = keys.slice(0, LISTED_KEYS).map(echoed);
  return keys.length > LISTED_KEYS ? [...shown, '…'] : shown;
}

/** Turns zod issues into violations naming the field, in both languages. */
export function violationsOf(issues: readonly z.core.$ZodIssue[], prefix = ''): Violation[] {
  // zod still runs a list's or a text's length checks on a value of the wrong type ("expected array,
  // received string; Too big: expected string to have <=1 characters"): the wrong type says it all.
  const wrongType = new Set(issues.filter((i) => i.code === 'invalid_type').map((i) => fieldOf(i.path)));
  const told = issues.filter((i) => i.code === 'invalid_type' || !wrongType.has(fieldOf(i.path)));
  return told.map((refused) => {
    const path =
      refused.code === 'unrecognized_keys' ? [...refused.path, ...refused.keys.slice(0, 1)] : refused.path;
    // Unknown keys are the caller's text, which zod's words would list in full, every one of them.
    const issue =
      refused.code === 'unrecognized_keys' ? { ...refused, keys: shownKeys(refused.keys) } : refused;
    // The whole value refused names the prefix alone (`body`, not `body.`).
    const field = path.length === 0 ? prefix.replace(/\.$/, '') : prefix + fieldOf(path);
    return { field, en: localise(issue, 'en'), ru: localise(issue, 'ru') };
  });
}

/**
 * Picks the mode and checks settings against its schema: unknown keys anywhere give `unknown_setting`
 * (reference: "A setting that is not listed for the chosen mode is rejected"), every other broken rule
 * `invalid_settings`. Accepted settings come back with defaults filled in.
 */
export function validateSettings(model: ModelSpec, settings: unknown): SettingsResult {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    return {
      ok: false,
      code: 'invalid_settings',
      violations: [
        { field: 'settings', en: 'settings must be an object', ru: 'settings должен быть объектом' },
      ],
    };
  }
  const record = settings as Record<string, unknown>;
  let mode: ModeSpec | undefined;
  if (model.modeField === null) {
    mode = model.modes[0];
  } else {
    const selector = record[model.modeField];
    const names = model.modes.map((m) => m.name).join(', ');
    mode = model.modes.find((m) => m.name === selector);
    if (mode === undefined) {
      const field = `settings.${model.modeField}`;
      return {
        ok: false,
        code: 'invalid_settings',
        violations: [
          selector === undefined
            ? {
                field,
                en: `${field} is required; one of: ${names}`,
                ru: `${field} обязателен; одно из: ${names}`,
              }
            : {
                field,
                en: `${field} must be one of: ${names}`,
                ru: `${field} должен быть одним из: ${names}`,
              },
        ],
      };
    }
  }
  if (mode === undefined) throw new Error(`model ${model.key} declares no modes`);
  // reportInput lets zod's messages say what was received ("received number").
  const parsed = mode.schema.safeParse(record, { reportInput: true });
  if (parsed.success) return { ok: true, mode, settings: parsed.data };
  const unknown = parsed.error.issues.filter((i) => i.code === 'unrecognized_keys');
  const issues = unknown.length > 0 ? unknown : parsed.error.issues;
  return {
    ok: false,
    code: unknown.length > 0 ? 'unknown_setting' : 'invalid_settings',
    violations: violationsOf(issues, 'settings.'),
  };
}
