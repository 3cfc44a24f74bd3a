/** JSON bodies of routes other than tasks and price (reference "Limits"). */
export const DEFAULT_BODY_LIMIT = 16 * 1024;
/** JSON bodies of POST /v1/tasks and POST /v1/price. */
export const TASK_BODY_LIMIT = 64 * 1024;
/**
 * JSON bodies providers post to callback URLs. Cog's `completed` webhook carries its output files as
 * data URLs inside the body, so the cap is that of a result picture or sound, not of a small message.
 */
export const CALLBACK_BODY_LIMIT = 32 * 1024 * 1024;
