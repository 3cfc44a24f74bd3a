/** The real service listening on 127.0.0.1 for the client's tests, with a funded account. */
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestAccount, type TestApp } from '../../test/helpers.ts';

export interface LiveApp {
  t: TestApp;
  account: TestAccount;
  baseUrl: string;
  close(): Promise<void>;
}

/** Starts the app (SQLite or the TEST_DATABASE_URL/TEST_STORAGE_URL backends) and listens on a free port. */
export async function startLiveApp(
  balanceMinor = 10_000_000,
  env: Record<string, string> = {},
): Promise<LiveApp> {
  const t = await startTestApp({ env });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const account = await t.account({ balanceMinor });
  return { t, account, baseUrl: `http://127.0.0.1:${port}`, close: () => t.close() };
}
