import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/** Random bytes drawn 4 KiB at a time: one call to the CSPRNG per 256 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function random16(): Buffer {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 16;
  return pool.subarray(poolOffset - 16, poolOffset);
}

/** The last id's time (Unix milliseconds) and counter, so ids of one process keep increasing. */
const last = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/**
 * A UUID version 7 (RFC 9562, made by `uuid`): 48-bit Unix milliseconds, then a 32-bit counter that
 * keeps ids made in the same millisecond in order, then random bits. Ids sort by creation, which gives
 * stable ledger order and cursor pagination without a separate sequence column.
 *
 * `uuid` keeps ids monotonic only when it reads the clock itself; callers pass their clock's time
 * (tests move it by hand), so the counter is kept here the way `uuid` keeps it: a new millisecond
 * starts it at a random 31-bit value, the same or an earlier one counts up, and its overflow moves
 * the time one millisecond on.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const random = random16();
  if (nowMs > last.msecs) {
    last.msecs = nowMs;
    last.seq = random.readUInt32BE(6) & 0x7fff_ffff;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs += 1;
  }
  return v7({ msecs: last.msecs, seq: last.seq, random });
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
