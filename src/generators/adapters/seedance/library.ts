/**
 * The library side of a Seedance channel (PROVIDERS.md §4, video-omni): Seedance keeps no characters or
 * voices, so we keep them. A record is saved at once and its upstream id is the list of our own file links
 * it stands for (a character's portrait and full-length shot, a voice's samples); a task naming the record
 * sends them as `reference_image` and `reference_audio` items. Seedance has no helpers or singers.
 */
import { GeneratorUnavailable } from '../../generator.ts';
import {
  type AnySettlement,
  type HelperIO,
  type HelperName,
  type LibraryCreated,
  type LibraryCreateRequest,
  type LibraryGenerator,
  LibraryRejected,
  type RecordingCheck,
} from '../../library.ts';
import type { KeptFiles } from './wire.ts';

function links(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export class SeedanceLibrary implements LibraryGenerator {
  async ensureAvailable(): Promise<void> {}

  async createRecord(request: LibraryCreateRequest): Promise<LibraryCreated> {
    const f = request.fields;
    let kept: KeptFiles;
    if (request.library === 'characters')
      kept = { images: [...links(f['portrait_url']), ...links(f['full_body_url'])], audio: [] };
    else if (request.library === 'voices') kept = { images: [], audio: links(f['sample_urls']) };
    else throw new LibraryRejected(`Seedance keeps no ${request.library}`);
    return { data: {}, upstreamId: JSON.stringify(kept) };
  }

  async issuePhrase(): Promise<string> {
    throw new LibraryRejected('Seedance has no singing voices');
  }

  async checkRecording(_check: RecordingCheck): Promise<AnySettlement> {
    throw new LibraryRejected('Seedance has no singing voices');
  }

  async runHelper<H extends HelperName>(helper: H): Promise<HelperIO[H]['output']> {
    throw new GeneratorUnavailable(`Seedance has no ${helper} helper`);
  }
}
