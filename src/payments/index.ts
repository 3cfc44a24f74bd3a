export {
  minorToValue,
  type PaymentProvider,
  type PaymentRequest,
  type ProviderPayment,
  ProviderUnavailable,
  valueToMinor,
} from './provider.ts';
export { TopupSweep } from './sweep.ts';
export { TestProvider } from './test-provider.ts';
export {
  type AdminTopupView,
  isTopupPayment,
  TOPUP_EXPIRY_MS,
  TOPUP_MAX_MINOR,
  TOPUP_MIN_MINOR,
  TOPUP_PAGE,
  TopupService,
  type TopupServiceDeps,
  type TopupStatus,
  type TopupView,
} from './topup-service.ts';
export { parsePayment, type YookassaOptions, YookassaProvider } from './yookassa.ts';
export { isYookassaSender, YOOKASSA_SENDER_RANGES } from './yookassa-senders.ts';
