/**
 * The element library at Kling (PROVIDERS.md §5 "Elements"): `POST /v1/general/advanced-custom-elements`
 * starts an asynchronous creation, which is read every 2 s until Kling says it succeeded or failed (at most
 * 5 minutes, the reference's wait); the record keeps Kling's `element_id` as its upstream id. A refusal
 * is 502 element_create_failed; a busy or broken Kling is 503 sg_unavailable. No credit is thrown as
 * `ChannelOutOfCredit`: the channel router disables the channel and answers 503 (channel-library.ts).
 * A creation sent with our `external_task_id` that went unanswered is found in Kling's list by that id
 * later and its element deleted (`deleteUnanswered`).
 */
import { cutUnits } from '../../../lib/index.ts';
import { GenerationError, GeneratorTransientError, GeneratorUnavailable } from '../../generator.ts';
import {
  type AnySettlement,
  type HelperIO,
  type HelperName,
  LIBRARY_WAIT_MS,
  type LibraryCreated,
  type LibraryCreateRequest,
  type LibraryGenerator,
  LibraryRejected,
  type RecordDeletion,
  type UnansweredCreation,
} from '../../library.ts';
import { type AdapterDeps, ChannelOutOfCredit } from '../types.ts';
import type { KlingApi } from './adapter.ts';
import { dataOf, isRecord, text } from './wire.ts';

const ELEMENTS = '/v1/general/advanced-custom-elements';
/** Kling's codes for a thing it does not know (PROVIDERS.md §5 "Errors": 404/1202, 1203). */
const NOT_FOUND_CODES = new Set([1202, 1203]);

/** Between two reads of an element's creation (milliseconds). */
export const ELEMENT_POLL_MS = 2_000;
/** Our `external_task_id` of the creation of the record `recordId`. */
const externalIdOf = (recordId: string): string => `element-${recordId}`;
/**
 * Kling's element list, newest first, is searched for an unanswered creation page by page until a page
 * holds only creations made this long before ours was sent (clock skew), at most `LIST_PAGES` pages.
 */
const LIST_SKEW_MS = 10 * 60_000;
const LIST_PAGES = 100;
const LIST_PAGE_SIZE = 100;
/** Kling's tag of a person (`character` of ours); other tags send no `tag_list`. */
const CHARACTER_TAG = 'o_102';

function links(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The `element_id` a succeeded creation made, or null. */
function elementIdOf(data: Record<string, unknown>): string | null {
  const result = isRecord(data['task_result']) ? data['task_result'] : {};
  const first = Array.isArray(result['elements']) ? result['elements'][0] : undefined;
  const id = isRecord(first) ? first['element_id'] : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The body of an element creation (PROVIDERS.md §5 "Our mapping"). */
export function elementBody(
  fields: Readonly<Record<string, unknown>>,
  publicUrl: (url: string) => string,
  extra: { callback_url?: string; external_task_id: string },
): Record<string, unknown> {
  const images = links(fields['image_urls']).map(publicUrl);
  const video = links(fields['video_url']).map(publicUrl);
  const [frontal, ...rest] = images;
  const source =
    frontal === undefined
      ? {
          reference_type: 'video_refer',
          element_video_list: { refer_videos: video.map((v) => ({ video_url: v })) },
        }
      : {
          reference_type: 'image_refer',
          element_image_list: {
            frontal_image: frontal,
            // A lone image is also the one refer image.
            refer_images: (rest.length > 0 ? rest : [frontal]).map((url) => ({ image_url: url })),
          },
        };
  return {
    element_name: cutUnits(String(fields['name'] ?? ''), 20),
    element_description: cutUnits(String(fields['description'] ?? ''), 100),
    ...source,
    ...(fields['tag'] === 'character' ? { tag_list: [{ tag_id: CHARACTER_TAG }] } : {}),
    ...extra,
  };
}

export class KlingElements implements LibraryGenerator {
  readonly #deps: AdapterDeps;
  readonly #api: KlingApi;

  constructor(deps: AdapterDeps, api: KlingApi) {
    this.#deps = deps;
    this.#api = api;
  }

  async ensureAvailable(): Promise<void> {}

  async createRecord(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    if (request.library !== 'elements') throw new LibraryRejected(`Kling keeps no ${request.library}`);
    return asLibraryCall(async () => {
      const fields = request.fields;
      const linked = [...links(fields['image_urls']), ...links(fields['video_url'])];
      const json = elementBody(fields, await this.#deps.publicLinks(linked), {
        external_task_id: externalIdOf(request.recordId),
      });
      const created = await this.#api.call(
        { method: 'POST', path: ELEMENTS, json, signal },
        'element create',
      );
      const taskId = text(created['task_id']);
      if (taskId === null)
        throw new GeneratorTransientError('Kling element create: the answer has no task_id');
      const elementId = await this.#waitFor(taskId, signal);
      const cover = links(request.fields['image_urls'])[0] ?? links(request.fields['video_url'])[0] ?? null;
      return { data: { cover_url: cover }, upstreamId: elementId };
    });
  }

  /**
   * Reads the creation until it ends; Kling's `element_id` once it succeeded. A read that fails
   * transiently (429, 5xx, the network) is made again at the next turn: Kling goes on creating the
   * element, and giving up would leave it there (the caller's pictures) with no record of ours to delete.
   */
  async #waitFor(taskId: string, signal: AbortSignal): Promise<string> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(LIBRARY_WAIT_MS)]);
    for (;;) {
      const path = `${ELEMENTS}/${encodeURIComponent(taskId)}`;
      let data: Record<string, unknown>;
      try {
        data = await this.#api.call({ method: 'GET', path, signal: deadline }, 'element status');
      } catch (error) {
        if (!(error instanceof GeneratorTransientError) || signal.aborted) throw error;
        await sleep(ELEMENT_POLL_MS, deadline);
        continue;
      }
      const status = text(data['task_status']);
      if (status === 'failed')
        throw new LibraryRejected(`Kling refused the element: ${text(data['task_status_msg']) ?? 'failed'}`);
      if (status === 'succeed') {
        const id = elementIdOf(data);
        if (id !== null) return id;
        throw new LibraryRejected('Kling said the element succeeded but gave no element_id');
      }
      await sleep(ELEMENT_POLL_MS, deadline);
    }
  }

  /** `POST /v1/general/delete-elements {element_id}`; an element Kling does not know was gone already. */
  async deleteRecord(request: RecordDeletion, signal: AbortSignal): Promise<void> {
    if (request.library !== 'elements') return;
    const response = await this.#api.send({
      method: 'POST',
      path: '/v1/general/delete-elements',
      json: { element_id: request.upstreamId },
      signal,
    });
    const code = isRecord(response.body) ? response.body['code'] : undefined;
    if (response.status === 404 || (typeof code === 'number' && NOT_FOUND_CODES.has(code))) return;
    dataOf(response, 'element delete');
  }

  /**
   * A creation whose answer never came, or that we stopped waiting for: Kling reads a creation by its own
   * task id only, but its list (`GET …/advanced-custom-elements?pageNum=&pageSize=`, newest first) names
   * each with our `external_task_id`. The element found there is deleted; a creation still running is
   * asked about again later (thrown as transient); none found down to creations older than ours, or a
   * failed one, left nothing behind. A list too long to reach them is given up (thrown as final).
   */
  async deleteUnanswered(request: UnansweredCreation, signal: AbortSignal): Promise<void> {
    if (request.library !== 'elements') return;
    const task = await this.#listed(externalIdOf(request.recordId), Date.parse(request.sentAt), signal);
    if (task === null || text(task['task_status']) === 'failed') return;
    if (text(task['task_status']) !== 'succeed')
      throw new GeneratorTransientError(`Kling is still making the element of record ${request.recordId}`);
    const elementId = elementIdOf(task);
    if (elementId !== null) await this.deleteRecord({ ...request, upstreamId: elementId }, signal);
  }

  /** The creation sent with `externalId` at `sentAt` (epoch ms) in Kling's element list, or null. */
  async #listed(
    externalId: string,
    sentAt: number,
    signal: AbortSignal,
  ): Promise<Record<string, unknown> | null> {
    for (let page = 1; page <= LIST_PAGES; page++) {
      const path = `${ELEMENTS}?pageNum=${page}&pageSize=${LIST_PAGE_SIZE}`;
      const response = await this.#api.send({ method: 'GET', path, signal });
      const body = isRecord(response.body) ? response.body : {};
      const tasks = body['data'];
      if (!Array.isArray(tasks) || body['code'] !== 0 || response.status >= 300) {
        dataOf(response, 'element list');
        throw new GeneratorTransientError('Kling element list: the answer has no list');
      }
      const found = tasks.find(
        (t): t is Record<string, unknown> =>
          isRecord(t) && isRecord(t['task_info']) && t['task_info']['external_task_id'] === externalId,
      );
      if (found) return found;
      if (tasks.length < LIST_PAGE_SIZE) return null;
      // Newest first: once a whole page was made before ours was sent, ours is not further down.
      const newest = Math.max(...tasks.map((t) => (isRecord(t) ? Number(t['created_at']) : Number.NaN)));
      if (newest < sentAt - LIST_SKEW_MS) return null;
    }
    throw new GenerationError(
      'generation_failed',
      `Kling element list: ${externalId} not found in ${LIST_PAGES} pages of newer creations`,
    );
  }

  async issuePhrase(): Promise<string> {
    throw new LibraryRejected('Kling has no singing voices');
  }

  async checkRecording(): Promise<AnySettlement> {
    throw new LibraryRejected('Kling has no singing voices');
  }

  async runHelper<H extends HelperName>(helper: H): Promise<HelperIO[H]['output']> {
    throw new GeneratorUnavailable(`Kling has no ${helper} helper`);
  }
}

/** Busy or broken → 503; refused → 502 (libraries/ask-generator); no credit goes on for the router. */
async function asLibraryCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ChannelOutOfCredit) throw error;
    if (error instanceof GeneratorTransientError)
      throw new GeneratorUnavailable(error.message, { cause: error });
    if (error instanceof GenerationError) throw new LibraryRejected(error.message, { cause: error });
    throw error;
  }
}
