/**
 * The LibraryGenerator port: how the service asks the generation server to save library records
 * (elements, personas, voices, styles, characters), issue singing phrases, check a singer's recording
 * and run the free helpers. Real providers implement it as an adapter; the built-in simulator
 * (`simulator/library-sim.ts`) implements it offline. Unreachable: throw `GeneratorUnavailable`
 * (503 sg_unavailable, nothing created); refused: throw `LibraryRejected` (502 *_create_failed).
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
}

export interface LibraryCreated {
  /** Public fields the generator adds to the record (for example an element's `cover_url`). */
  data: Record<string, unknown>;
  /** Present when the record keeps learning after the answer (music styles, singing voices). */
  settles?: LibrarySettlement;
}

export interface PhraseRequest {
  recordId: string;
  /** 1 for the first phrase, then one more per retry. */
  attempt: number;
  /** ISO 639-1 code of the singer's language. */
  language: string;
  /** Phrases issued before; a new one differs from all of them. */
  avoid: readonly string[];
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
  /** Starts checking a singer's recording of the phrase; the outcome comes after `afterMs`. */
  checkRecording(request: RecordingCheck, signal: AbortSignal): Promise<LibrarySettlement>;
  /** Runs a free helper. */
  runHelper<H extends HelperName>(
    helper: H,
    input: HelperIO[H]['input'],
    signal: AbortSignal,
  ): Promise<HelperIO[H]['output']>;
}
