/**
 * Lints the OpenAPI documents as the app serves them: builds the app without a server (SQLite and files
 * in a temporary folder), writes the public and the operator document, and runs `redocly lint` on both
 * with `redocly.yaml` (the recommended rules). Offline; exits with Redocly's status.
 *
 *   npm run lint:openapi                      lint (part of `npm test`)
 *   node scripts/openapi-lint.ts --out DIR    also keep the two documents in DIR
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const token = 'openapi-lint-admin-token-0123456789';

/** The public and the operator document, as GET /openapi.json and GET /admin/openapi.json answer them. */
export async function servedDocuments(): Promise<{ public: unknown; operator: unknown }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-openapi-'));
  const config = loadConfig({
    DATA_DIR: dir,
    ADMIN_TOKEN: token,
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'https://api.gta.test',
  });
  const container = await createContainer(config, {});
  try {
    const app = await buildApp(container);
    try {
      const open = await app.inject({ method: 'GET', url: '/openapi.json' });
      const operator = await app.inject({
        method: 'GET',
        url: '/admin/openapi.json',
        headers: { authorization: `Bearer ${token}` },
      });
      return { public: open.json(), operator: operator.json() };
    } finally {
      await app.close();
    }
  } finally {
    await container.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const at = process.argv.indexOf('--out');
  const out =
    at > 0 ? path.resolve(process.argv[at + 1] ?? '.') : fs.mkdtempSync(path.join(os.tmpdir(), 'gta-lint-'));
  fs.mkdirSync(out, { recursive: true });
  const docs = await servedDocuments();
  const files = [path.join(out, 'openapi.json'), path.join(out, 'admin-openapi.json')];
  fs.writeFileSync(files[0] as string, JSON.stringify(docs.public, null, 2));
  fs.writeFileSync(files[1] as string, JSON.stringify(docs.operator, null, 2));
  const lint = spawnSync(
    path.join(root, 'node_modules', '.bin', 'redocly'),
    ['lint', '--config', path.join(root, 'redocly.yaml'), ...files],
    // Offline: no telemetry, no update check.
    {
      stdio: 'inherit',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  if (at < 0) fs.rmSync(out, { recursive: true, force: true });
  return lint.status ?? 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main();
}
