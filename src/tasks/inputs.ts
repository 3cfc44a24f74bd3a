/**
 * Turns the URL settings of a mode into probed input files (CONTRACT §6): our own upload links are read
 * from the upload record, anything else is downloaded once through the safe fetcher, recognised by
 * content and probed; then the mode's per-field rules (formats, size, lengths) are enforced.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { InputFile, InputRule, MediaFormat, ModeInputs, ModeSpec } from '../catalog/index.ts';
import { type ApiError, errors } from '../errors.ts';
import type { UploadService } from '../files/index.ts';
import { FetchError, fetchToFile, inspectFile } from '../media/index.ts';

export interface InputResolverDeps {
  uploads: UploadService;
  /** Test-only: exact addresses the fetcher may reach although they are private. Production: none. */
  allowAddresses?: readonly string[];
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
}

function unreadable(target: ProbeTarget, en: string, ru: string): ApiError {
  const detail = { en: `${target.label}: ${en}`, ru: `${target.label}: ${ru}` };
  return target.invalid === 'request' ? errors.invalidRequest(detail) : errors.invalidSettings(detail);
}

/** Probes one remote file: download (capped), recognise, measure. */
async function probeRemote(url: string, target: ProbeTarget, deps: InputResolverDeps): Promise<ProbedFile> {
  const { label, maxBytes } = target;
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gta-input-'));
  try {
    let fetched: Awaited<ReturnType<typeof fetchToFile>>;
    try {
      fetched = await fetchToFile(url, {
        dir,
        maxBytes,
        ...(deps.allowAddresses ? { allowAddresses: deps.allowAddresses } : {}),
        ...(target.signal ? { signal: target.signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof FetchError)) throw error;
      if (error.reason === 'too_large') throw errors.fileTooLarge(label, maxBytes);
      if (error.reason === 'empty') throw errors.fileEmpty(label);
      throw unreadable(
        target,
        `the file at ${url} cannot be read (${error.reason})`,
        `файл по адресу ${url} недоступен (${error.reason})`,
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

function checkRule(file: InputFile, rule: InputRule): void {
  // Format and size were checked by probeUrl; what is left are the lengths.
  const field = `settings.${file.field}.${file.position}`;
  const seconds = file.durationSeconds;
  if (seconds === undefined) {
    if (rule.minSeconds !== undefined || rule.maxSeconds !== undefined) {
      throw both(field, 'the length of the file cannot be read', 'не удаётся определить длительность файла');
    }
    return;
  }
  if (rule.minSeconds !== undefined && seconds < rule.minSeconds) {
    throw both(
      field,
      `the file is ${seconds.toFixed(2)} s long; at least ${rule.minSeconds} s is needed`,
      `длительность файла ${seconds.toFixed(2)} с; нужно не меньше ${rule.minSeconds} с`,
    );
  }
  if (rule.maxSeconds !== undefined && seconds > rule.maxSeconds) {
    throw both(
      field,
      `the file is ${seconds.toFixed(2)} s long; at most ${rule.maxSeconds} s is allowed`,
      `длительность файла ${seconds.toFixed(2)} с; допустимо не больше ${rule.maxSeconds} с`,
    );
  }
}

/** Resolves and checks every URL setting the mode declares input rules for. */
export async function resolveInputs(
  mode: ModeSpec,
  settings: Readonly<Record<string, unknown>>,
  deps: InputResolverDeps,
): Promise<ModeInputs> {
  const files: InputFile[] = [];
  // One refused file ends the request: the downloads still running for it are stopped too.
  const downloads = new AbortController();
  for (const [field, rule] of Object.entries(mode.inputRules ?? {})) {
    const urls = urlsOf(settings[field]);
    const resolved = await Promise.all(
      urls.map(async (url, position): Promise<InputFile> => {
        const label = `settings.${field}.${position}`;
        const facts = await probeUrl(
          url,
          { label, maxBytes: rule.maxBytes, formats: rule.formats, signal: downloads.signal },
          deps,
        );
        const file: InputFile = { field, position, url, ...facts };
        checkRule(file, rule);
        return file;
      }),
    ).catch((error: unknown) => {
      downloads.abort();
      throw error;
    });
    if (rule.maxTotalSeconds !== undefined) {
      const total = resolved.reduce((sum, f) => sum + (f.durationSeconds ?? 0), 0);
      if (total > rule.maxTotalSeconds) {
        throw both(
          `settings.${field}`,
          `the files are ${total.toFixed(2)} s long together; at most ${rule.maxTotalSeconds} s is allowed`,
          `общая длительность файлов ${total.toFixed(2)} с; допустимо не больше ${rule.maxTotalSeconds} с`,
        );
      }
    }
    files.push(...resolved);
  }
  return { files };
}
