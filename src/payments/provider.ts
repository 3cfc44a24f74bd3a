/**
 * What a payment provider does for top-ups (CONTRACT §14): create a payment with a redirect confirmation,
 * and read a payment back. Nothing a provider sends on its own (a notification) is trusted: only what
 * `read` answers moves a top-up.
 */

/** A payment as the provider reports it. */
export interface ProviderPayment {
  id: string;
  /** YooKassa's states; `waiting_for_capture` only happens with `capture: false`, which is never asked. */
  status: 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';
  amountMinor: number;
  currency: string;
  /** `metadata.topup_id`: the top-up the payment was made for. */
  topupId: string | null;
  /** Where the payer confirms the payment; null once the provider no longer offers it. */
  confirmationUrl: string | null;
  /** `cancellation_details.reason` of a canceled payment. */
  cancellationReason: string | null;
}

export interface PaymentRequest {
  topupId: string;
  amountMinor: number;
  returnUrl: string;
  description: string;
}

export interface PaymentProvider {
  /** `yookassa` or `test`: stored on each top-up. */
  readonly name: string;
  /** Creates the payment of a top-up; the top-up id is its idempotence key. Throws ProviderUnavailable. */
  create(request: PaymentRequest): Promise<ProviderPayment>;
  /** The payment as the provider knows it now; null when it knows no such payment. */
  read(paymentId: string): Promise<ProviderPayment | null>;
  /** Cancels a payment left unpaid for a day, where the provider does not do it itself (the test mode). */
  expire?(paymentId: string): Promise<void>;
}

/**
 * The provider did not answer, answered 5xx or 429, or refused our credentials: the outcome is unknown
 * or not ours to fix now. Answered 503 payments_unavailable; nothing is recorded as paid.
 */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
}

/** Kopecks as the decimal string of two digits YooKassa takes (`150000` → `"1500.00"`). */
export function minorToValue(amountMinor: number): string {
  const rubles = Math.floor(amountMinor / 100);
  return `${rubles}.${String(amountMinor % 100).padStart(2, '0')}`;
}

/** YooKassa's `"1500.00"` back to kopecks; null when it is not such a string. */
export function valueToMinor(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(value);
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
