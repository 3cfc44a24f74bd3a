import type { CallbackProvider } from '../generators/index.ts';

/** JSON bodies of routes other than tasks and price (reference "Limits"). */
export const DEFAULT_BODY_LIMIT = 16 * 1024;
/** JSON bodies of POST /v1/tasks and POST /v1/price. */
export const TASK_BODY_LIMIT = 64 * 1024;
/**
 * JSON bodies providers post to callback URLs, by provider (PROVIDERS.md). Cog's `completed` webhook
 * carries its output files as data URLs inside the body, so its cap is that of a result picture, sound or
 * short video. Suno's and Kling's callbacks are task records that link their files: a few KB, so 256 KiB
 * leaves room and keeps what an anonymous sender can make us read small.
 */
export const CALLBACK_BODY_LIMITS: Readonly<Record<CallbackProvider, number>> = {
  cog: 32 * 1024 * 1024,
  suno: 256 * 1024,
  kling: 256 * 1024,
};
/** The callback route's own cap, the largest provider's; each provider's is enforced before it. */
export const CALLBACK_BODY_LIMIT = Math.max(...Object.values(CALLBACK_BODY_LIMITS));

/**
 * Longest path parameter (an id, a token, a key) the router hands to a route: one longer is 404
 * not_found. Far above any id the service makes, so that an unknown id of any sensible length reaches
 * its route and gets the route's own answer (404 task_not_found, the dashboard's 404 page).
 */
export const PATH_PARAM_MAX = 1000;
