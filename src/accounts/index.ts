export { type AccountView, createAccount, getAccount } from './accounts.ts';
export {
  ACCOUNT_NAME_MAX,
  AdminService,
  CREDIT_REFERENCE_MAX,
  KEY_MODELS_MAX,
  KEY_NAME_MAX,
  LEDGER_PAGE_MAX,
  MAX_ACTIVE_LIMIT,
} from './admin-service.ts';
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
