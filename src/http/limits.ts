/** JSON bodies of routes other than tasks and price (reference "Limits"). */
export const DEFAULT_BODY_LIMIT = 16 * 1024;
/** JSON bodies of POST /v1/tasks and POST /v1/price. */
export const TASK_BODY_LIMIT = 64 * 1024;
/**
 * JSON bodies providers post to callback URLs. Cog's `completed` webhook carries its output files as
 * data URLs inside the body, so the cap is that of a result picture or sound, not of a small message.
 */
export const CALLBACK_BODY_LIMIT = 32 * 1024 * 1024;

/**
 * Longest path parameter (an id, a token, a key) the router hands to a route: one longer is 404
 * not_found. Far above any id the service makes, so that an unknown id of any sensible length reaches
 * its route and gets the route's own answer (404 task_not_found, the dashboard's 404 page).
 */
export const PATH_PARAM_MAX = 1000;
