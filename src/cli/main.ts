import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { createContainer } from '../container.ts';
import { isApiError } from '../errors.ts';
import { translate } from '../i18n/index.ts';
import { ADMIN_USAGE, runAdminCommand, UsageError } from './admin.ts';
import { isParseArgsError, runUserCli } from './user.ts';

/**
 * `gta admin …` / `npm run admin -- …`: argument parsing only; the work is the services'. The user
 * commands (`gta run|price|tasks|download|upload|balance`) talk to a running service through the SDK.
 */
async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] !== 'admin') {
    return runUserCli(argv, {
      env: process.env,
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
      tty: process.stderr.isTTY === true,
    });
  }
  let parsed: ReturnType<typeof parseAdminArgs>;
  try {
    parsed = parseAdminArgs(argv);
  } catch (error) {
    // An unknown option or one without its value is a usage mistake like any other: exit 2, with the usage.
    if (!isParseArgsError(error)) throw error;
    process.stderr.write(`${error.message}\n\n${ADMIN_USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [program, ...rest] = positionals;
  if (values.help || program !== 'admin' || rest.length === 0) {
    process.stdout.write(ADMIN_USAGE);
    return values.help ? 0 : 2;
  }
  const container = await createContainer(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }));
  try {
    const { help: _help, ...options } = values;
    const result = await runAdminCommand(container.services, rest, options);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${ADMIN_USAGE}`);
      return 2;
    }
    if (isApiError(error)) {
      process.stderr.write(
        `${error.code}: ${error.detail?.en ?? translate(error.code, 'en', error.params)}\n`,
      );
      return 1;
    }
    throw error;
  } finally {
    await container.close();
  }
}

function parseAdminArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      q: { type: 'string' },
      amount: { type: 'string' },
      reference: { type: 'string' },
      models: { type: 'string' },
      'daily-limit': { type: 'string' },
      available: { type: 'string' },
      'max-active': { type: 'string' },
      enabled: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
