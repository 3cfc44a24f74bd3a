/** Cog's wire shapes (PROVIDERS.md §3) and their reading, kept apart from the run logic. */

/** A prediction as a webhook carries it; only the fields the adapter reads. */
export interface CogPrediction {
  id: string | null;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output: unknown;
  error: string | null;
}

const STATUSES: ReadonlySet<string> = new Set(['starting', 'processing', 'succeeded', 'failed', 'canceled']);

/**
 * The prediction id of a run: the run key (`<task id>/<run number>`) with `/` made `_`, since a slash
 * cannot travel in the `PUT /predictions/{id}` path. Deterministic, so a repeated PUT names the same run.
 */
export function predictionIdOf(runKey: string): string {
  return runKey.replace(/[^A-Za-z0-9_.-]/g, '_');
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

/** The prediction's `input`: our settings, every http(s) link as the provider should see it. */
export function inputOf(
  settings: Readonly<Record<string, unknown>>,
  publicUrl: (url: string) => string,
): Record<string, unknown> {
  const map = (value: unknown): unknown => {
    if (typeof value === 'string') return isHttpUrl(value) ? publicUrl(value) : value;
    if (Array.isArray(value)) return value.map(map);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, map(inner)]));
    return value;
  };
  return map(settings) as Record<string, unknown>;
}

/** Every `data:` or http(s) URL string in an output (string, array or object values), in order. */
export function fileUrlsOf(output: unknown): string[] {
  const urls: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.startsWith('data:') || isHttpUrl(value)) urls.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) walk(item);
    }
  };
  walk(output);
  return urls;
}

/** A webhook body read as a prediction; null when it is not one (garbage is ignored, not trusted). */
export function readPrediction(body: unknown): CogPrediction | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as Record<string, unknown>;
  if (typeof record.status !== 'string' || !STATUSES.has(record.status)) return null;
  return {
    id: typeof record.id === 'string' ? record.id : null,
    status: record.status as CogPrediction['status'],
    output: record.output ?? null,
    error: typeof record.error === 'string' && record.error !== '' ? record.error : null,
  };
}

/** The reason a refused request gives: FastAPI's `{detail: [{loc, msg}]}`, `{detail: "…"}`, or the status. */
export function problemOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string' && detail !== '') return detail;
  if (Array.isArray(detail)) {
    const parts = detail.map((item) => {
      const { loc, msg } = (item ?? {}) as { loc?: unknown; msg?: unknown };
      const where = Array.isArray(loc) ? loc.filter((p) => p !== 'body').join('.') : '';
      return where ? `${where}: ${String(msg ?? 'invalid')}` : String(msg ?? 'invalid');
    });
    if (parts.length > 0) return parts.join('; ');
  }
  return `HTTP ${status}`;
}
