/** JSON bodies of routes other than tasks and price (reference "Limits"). */
export const DEFAULT_BODY_LIMIT = 16 * 1024;
/** JSON bodies of POST /v1/tasks and POST /v1/price. */
export const TASK_BODY_LIMIT = 64 * 1024;
