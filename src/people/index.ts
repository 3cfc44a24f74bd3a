export { EMAIL_MAX, normalizeEmail } from './email.ts';
export { ExpiringMarks } from './expiring-marks.ts';
export { AttemptLimiter, DEFAULT_LOGIN_LIMITS, LoginLimiter, type LoginLimits } from './login-limiter.ts';
export { hashPassword, PASSWORD_MAX, PASSWORD_MIN, verifyPassword } from './password.ts';
export { ACCOUNT_SEARCH_LIMIT, ACCOUNT_SEARCH_MAX_LENGTH, type AccountWithPerson } from './people-admin.ts';
export { PeopleService, type PeopleServiceDeps } from './people-service.ts';
export { type Session, sessionPrincipal } from './sessions.ts';
export { hashToken, newToken, TOKEN_TTL_MS, type TokenPurpose } from './tokens.ts';

/** The session cookie's name (HttpOnly, SameSite=Lax; Secure behind https). */
export const SESSION_COOKIE = 'gta_session';
/** Header of the CSRF token on cookie-authenticated unsafe /v1 requests and fetches. */
export const CSRF_HEADER = 'x-csrf-token';
/** Form field of the CSRF token on the dashboard's form posts. */
export const CSRF_FIELD = '_csrf';
