/** Asking the generator on behalf of a library: its failures become the API's refusals. */
import { errors } from '../errors.ts';
import { GeneratorUnavailable, LibraryRejected } from '../generators/index.ts';
import type { CreateContext, CreationPlan, Learning, LibraryDecl, PendingStep } from './types.ts';

/**
 * Maps the generator's failures to the API's refusals: 503 sg_unavailable, 502 `failCode` (a library's
 * `*_create_failed`, or `helper_failed` for a free helper's call).
 */
export async function askGenerator<T>(
  failCode: Parameters<typeof errors.createFailed>[0],
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof GeneratorUnavailable) throw errors.sgUnavailable();
    if (error instanceof LibraryRejected) throw errors.createFailed(failCode);
    // Our wait of LIBRARY_WAIT_MS ran out: the generator did not save the record in time.
    if (error instanceof DOMException && error.name === 'TimeoutError') throw errors.createFailed(failCode);
    throw error;
  }
}

/** The state a record takes when learning succeeds, with the fields it gains (asked of the generator now). */
export async function learned(
  decl: LibraryDecl,
  learns: Learning<string>,
  ctx: CreateContext,
  plan: CreationPlan,
): Promise<PendingStep> {
  const gains = learns.gains;
  if (!gains) return { status: learns.succeeds };
  return { status: learns.succeeds, data: await askGenerator(decl.failCode, () => gains(ctx, plan)) };
}
