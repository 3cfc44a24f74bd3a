/**
 * The money and limit checks of acceptance that need no input file (issue 10.17). Downloads of linked
 * files cost the server time and bandwidth, so a request the hold would refuse anyway is refused before
 * them: the active-task limit, the key's daily limit and the balance, against the cheapest price the
 * settings can have (input files only ever add to a price). The creation transaction checks all three
 * again with the real price, under the account lock.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import type { Tx } from '../db/index.ts';
import { errors } from '../errors.ts';
import { balancesOf, spentToday } from '../ledger/index.ts';
import { moscowDay } from '../lib/index.ts';
import { activeTaskCount } from './active-tasks.ts';

/**
 * Throws what the hold would throw for a run of at least `floorMinor`: 429 too_many_active, 403
 * key_daily_limit_exceeded, 402 insufficient_funds (the order of the creation transaction).
 */
export async function mustBeAffordable(
  tx: Tx,
  principal: KeyPrincipal,
  run: { model: string; floorMinor: number; maxActive: number; now: Date },
): Promise<void> {
  if ((await activeTaskCount(tx, principal.accountId, run.model)) >= run.maxActive) {
    throw errors.tooManyActive(run.model, run.maxActive);
  }
  if (principal.dailyLimitMinor !== null && principal.keyId !== null) {
    const spent = await spentToday(tx, principal.keyId, moscowDay(run.now).start);
    if (spent + run.floorMinor > principal.dailyLimitMinor) {
      throw errors.keyDailyLimitExceeded(principal.dailyLimitMinor, spent);
    }
  }
  const available = (await balancesOf(tx, principal.accountId))?.availableMinor ?? 0;
  if (run.floorMinor > available) throw errors.insufficientFundsForAtLeast(run.floorMinor, available);
}
