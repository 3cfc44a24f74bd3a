/**
 * The LibraryGenerator port: how the service asks the generation server to save library records
 * (elements, personas, voices, styles, characters), issue singing phrases, check a singer's recording
 * and run the free helpers. Real providers implement it as an adapter; the built-in simulator
 * (`simulator/library-sim.ts`) implements it offline. Unreachable: throw `GeneratorUnavailable`
 * (503 sg_unavailable, nothing created); refused: throw `LibraryRejected` (502 *_create_failed, or
 * helper_failed for a helper). A provider adapter's library side throws `ChannelOutOfCredit` when its
 * channel's account has no credit; the channel router, through which the services reach it, disables the
 * channel and throws `GeneratorUnavailable` instead (channels/channel-library.ts).
 */
/**
 * How long we wait for the generator on a request (reference: "client timeout of at least five
 * minutes"); our own wait is exactly that long, so a client following the reference never gives up first.
 */
export const LIBRARY_WAIT_MS = 5 * 60 * 1000;

/** The generator did not accept or save a record (reference: 502 element_create_failed and friends). */
export class LibraryRejected extends Error {
  override name = 'LibraryRejected';
}

/** How and when a step that runs after the answer (training, processing, verifying) ends. */
export interface LibrarySettlement {
  /** Time until the step ends (milliseconds). */
  afterMs: number;
  outcome: { ok: true } | { ok: false; reason: string };
}

/**
 * A step whose end only the generator can tell (Suno's voice validation and verification): the service
 * asks `settle` once `afterMs` has passed, then every `pollMs` until the answer is final.
 */
export interface LibraryPolledSettlement {
  /** Time before the first question (milliseconds). */
  afterMs: number;
  /** Time between two questions while the step runs (milliseconds). */
  pollMs: number;
  /** The upstream id `settle` is asked about (the step's own upstream task). (Default: the record's) */
  upstreamId?: string;
  outcome?: undefined;
}

/** Either settlement: known up front, or asked of the generator later. */
export type AnySettlement = LibrarySettlement | LibraryPolledSettlement;

/** True when the settlement's outcome must be asked of the generator (`settle`). */
export function isPolledSettlement(s: AnySettlement): s is LibraryPolledSettlement {
  return s.outcome === undefined;
}

/** The provider's ids of a file a record is made from (a persona's song version). */
export interface LibrarySource {
  /** Provider of the channel that made the file (`suno`). */
  provider: string;
  /** Its ids there (Suno: `{ taskId, audioId }`). */
  ids: Readonly<Record<string, string>>;
}

/** A question about a polled step (`LibraryPolledSettlement`). */
export interface SettleRequest {
  model: string;
  library: string;
  recordId: string;
  /** Which step: `create` (learning after the 201) or a step's name (`verify`). */
  step: string;
  /** The upstream id the settlement named (else the record's). */
  upstreamId: string;
}

/** The generator's answer about a polled step. */
export type SettleAnswer =
  | { state: 'running' }
  /** Ended well: public fields the record gains (a voice's phrase) and its upstream id from then on. */
  | { state: 'done'; data?: Record<string, unknown>; upstreamId?: string }
  | { state: 'failed'; reason: string };

export interface LibraryCreateRequest {
  model: string;
  /** The library's path segment at the model (`elements`, `styles`, …). */
  library: string;
  recordId: string;
  /** The creation body as accepted (URLs normalised to strings). */
  fields: Readonly<Record<string, unknown>>;
  /**
   * Present when the record keeps learning after the answer (music styles, singing voices): how long
   * that typically takes (milliseconds). The answer then carries `settles`.
   */
  learningMs?: number;
  /**
   * The provider's ids of the file the record is made from, when the service kept them (a persona's song
   * version made on a real channel); absent otherwise. A provider that needs them refuses without.
   */
  source?: LibrarySource;
}

export interface LibraryCreated {
  /** Public fields the generator adds to the record (for example an element's `cover_url`). */
  data: Record<string, unknown>;
  /** Present when the record keeps learning after the answer (music styles, singing voices). */
  settles?: LibrarySettlement;
  /**
   * Instead of `settles`, when only the generator can tell how learning ends (Suno's voice validation):
   * the service asks `settle` about step `create`.
   */
  polled?: LibraryPolledSettlement;
  /**
   * The provider's id of the record (a Suno persona id, a voice's validate task), kept with the record and
   * never shown; later calls get it back as `upstreamId`, and tasks naming the record as `upstream_id`.
   */
  upstreamId?: string;
}

export interface PhraseRequest {
  recordId: string;
  /** 1 for the first phrase, then one more per retry. */
  attempt: number;
  /** ISO 639-1 code of the singer's language. */
  language: string;
  /** Phrases issued before; a new one differs from all of them. */
  avoid: readonly string[];
  /** The record's upstream id (`LibraryCreated.upstreamId`), when the generator gave one. */
  upstreamId?: string;
}

export interface RecordingCheck {
  recordId: string;
  phrase: string;
  name: string;
  recordingUrl: string;
  /** Length of the recording when the probe could tell. */
  recordingSeconds?: number;
  /** Shortest recording we accept (seconds). */
  minSeconds: number;
  /** How long the check typically takes (milliseconds). */
  typicalMs: number;
  /** The record's upstream id (`LibraryCreated.upstreamId`), when the generator gave one. */
  upstreamId?: string;
}

/** The provider's copy of a record the caller deleted (`LibraryGenerator.deleteRecord`). */
export interface RecordDeletion {
  model: string;
  /** The library's path segment at the model (`voices`, `styles`, …). */
  library: string;
  recordId: string;
  /** The record's upstream id (`LibraryCreated.upstreamId`). */
  upstreamId: string;
}

/** A creation that failed without our learning what the provider made of it (`deleteUnanswered`). */
export interface UnansweredCreation {
  model: string;
  library: string;
  /** The record id the creation was sent with (`LibraryCreateRequest.recordId`). */
  recordId: string;
  /** When the creation was sent (ISO 8601): what the provider made of it is no older. */
  sentAt: string;
}

export interface LyricsVariant {
  title: string;
  text: string;
}

/** Input and output of each free helper (reference "Free helpers"). */
export interface HelperIO {
  lyrics: { input: { prompt: string }; output: { variants: LyricsVariant[] } };
  'style-boost': { input: { style: string }; output: { style: string } };
  enhance: { input: { prompt: string }; output: { prompt: string } };
}
export type HelperName = keyof HelperIO;

export interface LibraryGenerator {
  /** Throws GeneratorUnavailable when the server cannot take the request (checked before anything is stored). */
  ensureAvailable(fields: unknown, signal?: AbortSignal): Promise<void>;
  /** Saves a record at the generator; waits for it (up to LIBRARY_WAIT_MS on our side). */
  createRecord(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated>;
  /** A phrase for a singer to record (singing voices). */
  issuePhrase(request: PhraseRequest, signal: AbortSignal): Promise<string>;
  /** Starts checking a singer's recording of the phrase; the outcome comes after `afterMs`, or is polled. */
  checkRecording(request: RecordingCheck, signal: AbortSignal): Promise<AnySettlement>;
  /**
   * Where a polled step stands (`LibraryPolledSettlement`). Only generators that answer polled
   * settlements implement it.
   */
  settle?(request: SettleRequest, signal: AbortSignal): Promise<SettleAnswer>;
  /**
   * Deletes the provider's copy of a record the caller deleted. Resolves once it is gone, including when
   * the provider no longer knew it; throws while the provider cannot be asked (the service asks again
   * later). Only generators that keep records at a provider implement it.
   */
  deleteRecord?(request: RecordDeletion, signal: AbortSignal): Promise<void>;
  /**
   * Deletes what the provider may have made of a creation that failed without its outcome known (the
   * create call went unanswered, our wait ran out), found by the record id it was sent with. Resolves once
   * nothing is left there, including when the provider never took the creation; throws while the provider
   * cannot be asked or is still making it (the service asks again later). Only generators that can find a
   * creation by our id implement it.
   */
  deleteUnanswered?(request: UnansweredCreation, signal: AbortSignal): Promise<void>;
  /** Runs a free helper. */
  runHelper<H extends HelperName>(
    helper: H,
    input: HelperIO[H]['input'],
    signal: AbortSignal,
  ): Promise<HelperIO[H]['output']>;
}
