import type { Services } from '../http/index.ts';

export const ADMIN_USAGE = `Usage: npm run admin -- <command> [options]

  accounts create --name NAME              create an account
  accounts get ACCOUNT_ID                  an account with its balances
  accounts find [--email E] [--q TEXT]     accounts by exact e-mail, or by a part of the name or e-mail
  accounts email ACCOUNT_ID --email E      attach an e-mail (a confirmation mail goes out)
  credit ACCOUNT_ID --amount KOPECKS --reference REF
                                           credit once per reference
  ledger ACCOUNT_ID                        money movements, newest first
  keys create ACCOUNT_ID [--name N] [--models a,b] [--daily-limit KOPECKS]
                                           issue an API key (shown once)
  keys revoke KEY_ID                       revoke an API key
  models set MODEL_KEY [--available true|false] [--max-active N|default]
                                           switch a model, set its active-task limit
  channels list                            channels of GENERATORS_FILE and their state
  channels set NAME --enabled true|false   enable (also after running out of credit) or disable
`;

export class UsageError extends Error {
  override name = 'UsageError';
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** Decimal digits only: `Number()` alone would also read `1e3`, `0x10` or ` 12 ` as numbers of kopecks. */
function integer(value: string | undefined, what: string): number {
  const text = need(value, what);
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new UsageError(`${what} must be a whole non-negative number`);
  }
  return n;
}

function bool(value: string | undefined, what: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`${what} must be true or false`);
}

/**
 * The positionals each command takes, its own words included: one more (a second KEY_ID or ACCOUNT_ID) is
 * refused, never dropped unseen.
 */
const MOST_POSITIONALS: Readonly<Record<string, number>> = {
  'accounts create': 2,
  'accounts get': 3,
  'accounts find': 2,
  'accounts email': 3,
  credit: 2,
  ledger: 2,
  'keys create': 3,
  'keys revoke': 3,
  'models set': 3,
  'channels list': 2,
  'channels set': 3,
};

/**
 * Runs one operator command against the same AdminService as the operator API; returns what to print.
 * Holds no logic of its own beyond reading arguments.
 */
export async function runAdminCommand(
  services: Pick<Services, 'admin' | 'channels' | 'people'>,
  positionals: readonly string[],
  options: Readonly<Record<string, string | undefined>>,
): Promise<unknown> {
  const { admin, channels, people } = services;
  const [group, action, target] = positionals;
  // `credit` and `ledger` take the account right after them: without it, say what is missing.
  if ((group === 'credit' || group === 'ledger') && action === undefined) need(action, 'ACCOUNT_ID');
  const most = MOST_POSITIONALS[group === 'credit' || group === 'ledger' ? group : `${group} ${action}`];
  if (most !== undefined && positionals.length > most)
    throw new UsageError(`unexpected argument "${positionals[most]}"`);
  switch (`${group} ${action ?? ''}`.trim()) {
    case 'accounts create':
      return admin.createAccount(need(options.name, '--name'));
    case 'accounts get':
      return admin.getAccount(need(target, 'ACCOUNT_ID'));
    case 'accounts find':
      return {
        accounts: await people.findAccounts({
          ...(options.email === undefined ? {} : { email: options.email }),
          ...(options.q === undefined ? {} : { q: options.q }),
        }),
      };
    case 'accounts email':
      return people.attachEmail(need(target, 'ACCOUNT_ID'), need(options.email, '--email'));
    case `credit ${action}`: {
      // As the operator API: a credit moves at least one kopeck.
      const amount = integer(options.amount, '--amount');
      if (amount === 0) throw new UsageError('--amount must be at least 1 (kopecks)');
      const { entry, created } = await admin.credit(
        need(action, 'ACCOUNT_ID'),
        amount,
        need(options.reference, '--reference'),
      );
      return { ...entry, created };
    }
    case `ledger ${action}`: {
      // Every entry, page after page.
      const entries = [];
      let cursor: string | undefined;
      do {
        const page = await admin.ledger(need(action, 'ACCOUNT_ID'), { cursor });
        entries.push(...page.entries);
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return { entries };
    }
    case 'keys create':
      return admin.issueKey(need(target, 'ACCOUNT_ID'), {
        name: options.name ?? null,
        // Given but empty (`--models ''`, `--models ,`): an empty list, which is refused, never every model.
        models:
          options.models === undefined
            ? null
            : options.models
                .split(',')
                .map((m) => m.trim())
                .filter(Boolean),
        dailyLimitMinor:
          options['daily-limit'] === undefined ? null : integer(options['daily-limit'], '--daily-limit'),
      });
    case 'keys revoke':
      await admin.revokeKey(need(target, 'KEY_ID'));
      return { revoked: target };
    case 'models set':
      return admin.updateModel(need(target, 'MODEL_KEY'), {
        ...(options.available === undefined ? {} : { available: bool(options.available, '--available') }),
        ...(options['max-active'] === undefined
          ? {}
          : {
              maxActive:
                options['max-active'] === 'default' ? null : integer(options['max-active'], '--max-active'),
            }),
      });
    case 'channels list':
      return { channels: await channels.views() };
    case 'channels set':
      return channels.setEnabled(need(target, 'NAME'), bool(options.enabled, '--enabled'));
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`);
  }
}
