import { z } from 'zod';

/**
 * A timestamp field of an answer: ISO 8601 in UTC (`toISOString()`), published as `format: date-time` so
 * generated clients read it as a date. Only the document says so: answers are not checked at run time.
 */
export function timestamp() {
  return z.string().meta({ format: 'date-time' });
}
