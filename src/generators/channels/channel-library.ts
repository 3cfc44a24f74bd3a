/**
 * A channel's library side as the services reach it (CONTRACT §11): records, their later steps and the
 * free helpers. "A provider saying the channel's own account has no credit disables that channel", from a
 * library or helper call as from a task run: a `ChannelOutOfCredit` the adapter throws is told to the
 * channel's state (`out_of_credit`, the outcome the worker records for a run), and the caller gets
 * `GeneratorUnavailable` (503 sg_unavailable). The next call, like the next run, goes to another channel
 * where there is one. The library code itself never reaches the channel state or the database.
 */
import { ChannelOutOfCredit } from '../adapters/types.ts';
import { GeneratorUnavailable } from '../generator.ts';
import type {
  HelperIO,
  HelperName,
  LibraryGenerator,
  RecordDeletion,
  SettleAnswer,
  SettleRequest,
  UnansweredCreation,
} from '../library.ts';

/** The no credit in a failure or its causes (an adapter may have wrapped it), or null. */
function outOfCreditIn(error: unknown): ChannelOutOfCredit | null {
  let current = error;
  for (let depth = 0; current !== null && current !== undefined && depth < 5; depth++) {
    if (current instanceof ChannelOutOfCredit) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * `library` with every call guarded: no credit calls `outOfCredit` (which disables the channel), then
 * throws `GeneratorUnavailable`; every other answer or failure passes unchanged. The optional `settle`,
 * `deleteRecord` and `deleteUnanswered` are there only when `library` has them (the services test for them).
 */
export function channelLibrary(
  library: LibraryGenerator,
  outOfCredit: (error: ChannelOutOfCredit) => Promise<void>,
): LibraryGenerator {
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const noCredit = outOfCreditIn(error);
      if (noCredit === null) throw error;
      await outOfCredit(noCredit);
      throw new GeneratorUnavailable(noCredit.message, { cause: error });
    }
  };
  const settle = library.settle?.bind(library);
  const deleteRecord = library.deleteRecord?.bind(library);
  const deleteUnanswered = library.deleteUnanswered?.bind(library);
  return {
    ensureAvailable: (fields, signal) => guard(() => library.ensureAvailable(fields, signal)),
    createRecord: (request, signal) => guard(() => library.createRecord(request, signal)),
    issuePhrase: (request, signal) => guard(() => library.issuePhrase(request, signal)),
    checkRecording: (request, signal) => guard(() => library.checkRecording(request, signal)),
    runHelper: <H extends HelperName>(
      helper: H,
      input: HelperIO[H]['input'],
      signal: AbortSignal,
    ): Promise<HelperIO[H]['output']> => guard(() => library.runHelper(helper, input, signal)),
    ...(settle === undefined
      ? {}
      : {
          settle: (request: SettleRequest, signal: AbortSignal): Promise<SettleAnswer> =>
            guard(() => settle(request, signal)),
        }),
    ...(deleteRecord === undefined
      ? {}
      : {
          deleteRecord: (request: RecordDeletion, signal: AbortSignal): Promise<void> =>
            guard(() => deleteRecord(request, signal)),
        }),
    ...(deleteUnanswered === undefined
      ? {}
      : {
          deleteUnanswered: (request: UnansweredCreation, signal: AbortSignal): Promise<void> =>
            guard(() => deleteUnanswered(request, signal)),
        }),
  };
}
