/**
 * Turns the URL settings of a mode into probed input files (CONTRACT §6): our own upload links are read
 * from the upload record, anything else is downloaded once through the safe fetcher, recognised by
 * content and probed; then the mode's per-field rules (formats, size, lengths) are enforced. All links of
 * a request download at once under the request's one budget of time and bytes (download-budget.ts).
 */
import fsp from 'node:fs/promises';
import type { InputFile, InputRule, MediaFormat, ModeInputs, ModeSpec } from '../catalog/index.ts';
import { type ApiError, errors } from '../errors.ts';
import type { UploadService } from '../files/index.ts';
import { ruDecimal } from '../i18n/index.ts';
import { echoed, exactSeconds, makeTempFolder } from '../lib/index.ts';
import { FetchError, type FetchFailure, fetchToFile, inspectFile } from '../media/index.ts';
import { type ArtifactInputDeps, probeArtifactLink } from './artifact-inputs.ts';
import type { DownloadAllowance } from './download-budget.ts';

export interface InputResolverDeps {
  uploads: UploadService;
  /** Test-only: exact addresses the fetcher may reach although they are private. Production: none. */
  allowAddresses?: readonly string[];
  /** Budgets of requests and allowances of accounts; without it downloads are bounded one by one only. */
  downloads?: Pick<DownloadAllowance, 'open'>;
  /**
   * Artifact links of the caller's own tasks, read from storage (artifact-inputs.ts); without it such a
   * link is downloaded like any other URL.
   */
  artifacts?: ArtifactInputDeps;
}

const both = (label: string, en: string, ru: string): ApiError =>
  errors.invalidSettings({ en: `${label}: ${en}`, ru: `${label}: ${ru}` });

function urlsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

export type ProbedFile = Omit<InputFile, 'field' | 'position' | 'url'>;

/**
 * Facts about the file behind a URL: our own upload's record, or a capped download recognised by content
 * and probed. `label` names the field in refusals (`settings.image_url.0`, `body.source_url`).
 */
export async function probeUrl(
  url: string,
  target: ProbeTarget,
  deps: InputResolverDeps,
): Promise<ProbedFile> {
  const own = await deps.uploads.byUrl(url);
  const file: ProbedFile = own
    ? {
        format: own.format as MediaFormat,
        sizeBytes: Number(own.size_bytes),
        ...(own.duration_seconds === null ? {} : { durationSeconds: own.duration_seconds }),
        ...(own.width === null ? {} : { width: own.width }),
        ...(own.height === null ? {} : { height: own.height }),
      }
    : await probeRemote(url, target, deps);
  return checked(file, target);
}

/** The file if its format and size suit the target; 422 file_type or file_too_large otherwise. */
function checked(file: ProbedFile, target: ProbeTarget): ProbedFile {
  if (target.formats && !target.formats.includes(file.format)) throw errors.fileType(target.label);
  if (file.sizeBytes > target.maxBytes) throw errors.fileTooLarge(target.label, target.maxBytes);
  return file;
}

/** What a URL must be and how refusals name it. */
export interface ProbeTarget {
  /** Names the field in refusals: `settings.image_url.0`, `body.source_url`. */
  label: string;
  maxBytes: number;
  /** Accepted formats; others are 422 file_type. */
  formats?: readonly MediaFormat[];
  /** The 422 code of an unreadable file: invalid_settings in a task (default), invalid_request in a body. */
  invalid?: 'settings' | 'request';
  signal?: AbortSignal;
  /** The request's budget: its signal ends the download, its meter counts the bytes. */
  budget?: ProbeBudget;
}

/** What a request's downloads share: one signal ending them all and, when metered, a byte count. */
export interface ProbeBudget {
  signal: AbortSignal;
  meter?: (bytes: number) => Promise<void>;
}

/**
 * Why a link could not be read, as the Russian message says it; the English one names the reason's code.
 * `too_large` and `empty` have refusals of their own and are listed for completeness.
 */
const RU_FETCH_FAILURES: Readonly<Record<FetchFailure, string>> = {
  blocked: 'его узел — частный, локальный или служебный адрес',
  unreachable: 'узел не найден или не принимает соединения',
  timeout: 'узел не ответил вовремя',
  bad_status: 'сервер ответил ошибкой',
  bad_url: 'это не адрес http(s)',
  too_large: 'файл слишком большой',
  empty: 'файл пуст',
};

function unreadable(target: ProbeTarget, en: string, ru: string): ApiError {
  const detail = { en: `${target.label}: ${en}`, ru: `${target.label}: ${ru}` };
  return target.invalid === 'request' ? errors.invalidRequest(detail) : errors.invalidSettings(detail);
}

/** Probes one remote file: download (capped), recognise, measure. */
async function probeRemote(url: string, target: ProbeTarget, deps: InputResolverDeps): Promise<ProbedFile> {
  const { label, maxBytes } = target;
  // The link is the caller's text: a refusal echoes at most 100 characters of it, as of any other.
  const shown = echoed(url);
  if (await deps.uploads.isGoneLink(url)) {
    throw unreadable(
      target,
      `the upload at ${shown} was deleted or has expired; upload the file again`,
      `загрузка по адресу ${shown} удалена или её срок истёк; загрузите файл заново`,
    );
  }
  const dir = await makeTempFolder('input');
  try {
    let fetched: Awaited<ReturnType<typeof fetchToFile>>;
    try {
      fetched = await fetchToFile(url, {
        dir,
        maxBytes,
        ...(deps.allowAddresses ? { allowAddresses: deps.allowAddresses } : {}),
        ...signalOf(target),
        ...(target.budget?.meter ? { meter: target.budget.meter } : {}),
      });
    } catch (error) {
      if (!(error instanceof FetchError)) throw error;
      if (error.reason === 'too_large') throw errors.fileTooLarge(label, maxBytes);
      if (error.reason === 'empty') throw errors.fileEmpty(label);
      throw unreadable(
        target,
        `the file at ${shown} cannot be read (${error.reason})`,
        `файл по адресу ${shown} недоступен: ${RU_FETCH_FAILURES[error.reason]}`,
      );
    }
    const inspected = await inspectFile(fetched.path, fetched.sizeBytes);
    if (!inspected) throw errors.fileType(label);
    const { contentType: _type, ...facts } = inspected;
    return { ...facts, sizeBytes: fetched.sizeBytes };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

function signalOf(target: ProbeTarget): { signal?: AbortSignal } {
  const signals = [target.signal, target.budget?.signal].filter((s): s is AbortSignal => s !== undefined);
  if (signals.length === 0) return {};
  return { signal: signals.length === 1 ? signals[0]! : AbortSignal.any(signals) };
}

function checkRule(file: InputFile, rule: InputRule): void {
  // Format and size were checked by probeUrl; what is left are the lengths.
  const field = `settings.${file.field}.${file.position}`;
  const seconds = file.durationSeconds;
  if (seconds === undefined) {
    if (rule.minSeconds !== undefined || rule.maxSeconds !== undefined || rule.lengthNeeded === true) {
      throw both(field, 'the length of the file cannot be read', 'не удаётся определить длительность файла');
    }
    return;
  }
  if (rule.minSeconds !== undefined && seconds < rule.minSeconds) {
    throw both(
      field,
      `the file is ${seconds.toFixed(2)} s long; at least ${rule.minSeconds} s is needed`,
      `длительность файла ${ruDecimal(seconds.toFixed(2))} с; нужно не меньше ${ruDecimal(rule.minSeconds)} с`,
    );
  }
  if (rule.maxSeconds !== undefined && seconds > rule.maxSeconds) {
    throw both(
      field,
      `the file is ${seconds.toFixed(2)} s long; at most ${rule.maxSeconds} s is allowed`,
      `длительность файла ${ruDecimal(seconds.toFixed(2))} с; допустимо не больше ${ruDecimal(rule.maxSeconds)} с`,
    );
  }
}

/**
 * Resolves and checks every URL setting the mode declares input rules for. Every link of every field
 * downloads at once under one budget of `accountId`'s request (issue 10.1: one after another, five
 * links could take five minutes); the first refusal ends the other downloads. An artifact link counts as
 * the caller's own only for a task of `models` (the key's models, null for every model).
 */
export async function resolveInputs(
  mode: Pick<ModeSpec, 'inputRules'>,
  settings: Readonly<Record<string, unknown>>,
  deps: InputResolverDeps,
  accountId: string,
  models: readonly string[] | null = null,
): Promise<ModeInputs> {
  const fields = Object.entries(mode.inputRules ?? {}).map(([field, rule]) => ({
    field,
    rule,
    urls: urlsOf(settings[field]),
  }));
  if (fields.every((f) => f.urls.length === 0)) return { files: [] };
  const budget = await deps.downloads?.open(accountId, 'settings');
  const local = new AbortController();
  const target = { budget: budget ?? { signal: local.signal } };
  try {
    // Every file is probed at once, but a refusal is reported in the fields' declared order (and each
    // field's files in theirs): the first file to fail is not always the first to finish failing. A
    // refusal aborts only what comes after it; what comes before is awaited, as its refusal would win.
    const probes = fields.map(({ field, rule, urls }) => ({
      field,
      rule,
      files: urls.map((url, position) =>
        settle(async (): Promise<InputFile> => {
          const label = `settings.${field}.${position}`;
          const probe = { label, maxBytes: rule.maxBytes, formats: rule.formats, ...target };
          const artifact = deps.artifacts
            ? await probeArtifactLink(url, accountId, label, deps.artifacts, models)
            : null;
          const facts = artifact === null ? await probeUrl(url, probe, deps) : checked(artifact, probe);
          const file: InputFile = { field, position, url, ...facts };
          checkRule(file, rule);
          return file;
        }),
      ),
    }));
    const resolved: InputFile[] = [];
    for (const { field, rule, files } of probes) {
      const own: InputFile[] = [];
      for (const pending of files) {
        const outcome = await pending;
        if (!outcome.ok) throw outcome.error;
        own.push(outcome.value);
      }
      checkTotal(field, rule, own);
      resolved.push(...own);
    }
    return { files: resolved };
  } catch (error) {
    budget?.abort(error);
    local.abort(error);
    throw error;
  } finally {
    await budget?.close();
  }
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** Starts `run` and keeps its outcome, so a rejection waiting for its turn is never unhandled. */
function settle<T>(run: () => Promise<T>): Promise<Settled<T>> {
  return run().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function checkTotal(field: string, rule: InputRule, files: readonly InputFile[]): void {
  if (rule.maxTotalSeconds === undefined) return;
  // Exact to the microsecond: lengths that make the limit exactly are not refused for a rounding error.
  const total = exactSeconds(files.reduce((sum, f) => sum + (f.durationSeconds ?? 0), 0));
  if (total > rule.maxTotalSeconds) {
    throw both(
      `settings.${field}`,
      `the files are ${total.toFixed(2)} s long together; at most ${rule.maxTotalSeconds} s is allowed`,
      `общая длительность файлов ${ruDecimal(total.toFixed(2))} с; допустимо не больше ${ruDecimal(rule.maxTotalSeconds)} с`,
    );
  }
}
