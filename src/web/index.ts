export { consolePort } from './admin/index.ts';
export { Assets } from './assets.ts';
export type { TopupPort, WebTopup } from './pages/topup.ts';
export { type TopupRow, topupState, topupsTable } from './pages/topups-table.ts';
export {
  CSRF_FIELD,
  CSRF_HEADER,
  type PeoplePort,
  SESSION_COOKIE,
  type WebIssuedKey,
  type WebKey,
  type WebSession,
  type WebSignIn,
} from './people-port.ts';
export { CONTENT_SECURITY_POLICY, type WebDeps, webRoutes } from './routes.ts';
