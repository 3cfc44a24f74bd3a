export { type AccountView, createAccount, getAccount } from './accounts.ts';
export { AdminService, LEDGER_PAGE_MAX } from './admin-service.ts';
export { KeyAuthenticator, type KeyCacheOptions } from './key-auth.ts';
export {
  hashKey,
  type IssuedKey,
  isKeyActive,
  issueKey,
  KEYS_CHANNEL,
  type KeyPrincipal,
  type KeyView,
  keyAccount,
  listKeys,
  MAX_ACTIVE_KEYS,
  mayUseModel,
  revokeKey,
} from './keys.ts';
