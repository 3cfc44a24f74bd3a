/**
 * A webhook address as it is given (CONTRACT §12, §6): an http(s) URL of at most 2,048 characters, no
 * credentials, whose host resolves to public addresses only. Refused with 422 invalid_request naming the
 * field. The sender checks the address again at every attempt (DNS answers change).
 */
import { errors } from '../errors.ts';
import { checkPublicUrl, FetchError } from '../media/index.ts';

export const WEBHOOK_URL_MAX_LENGTH = 2048;

export interface WebhookUrlPolicy {
  /** Test-only escape hatch: exact IP strings allowed although private (FETCH_ALLOW_ADDRESSES). */
  allowAddresses: readonly string[];
}

const REASONS: Record<string, { en: string; ru: string }> = {
  bad_url: { en: 'not a valid http(s) URL without credentials', ru: 'не адрес http(s) без учётных данных' },
  blocked: {
    en: 'its host is a private, loopback, link-local or metadata address',
    ru: 'его узел — частный, локальный или служебный адрес',
  },
  unreachable: { en: 'its host does not resolve', ru: 'имя узла не разрешается' },
  timeout: { en: 'its host did not resolve in time', ru: 'имя узла не разрешилось вовремя' },
};

/** Throws 422 invalid_request naming `field` unless `url` may receive webhooks. */
export async function assertWebhookUrl(url: string, field: string, policy: WebhookUrlPolicy): Promise<void> {
  const refuse = (reason: { en: string; ru: string }) =>
    errors.invalidRequest({ en: `${field}: ${reason.en}.`, ru: `${field}: ${reason.ru}.` });
  // In characters (code points), as the request's schema counts them: an emoji is one, not two.
  if (url.length > WEBHOOK_URL_MAX_LENGTH && [...url].length > WEBHOOK_URL_MAX_LENGTH)
    throw refuse({
      en: `longer than ${WEBHOOK_URL_MAX_LENGTH} characters`,
      ru: `длиннее ${WEBHOOK_URL_MAX_LENGTH} символов`,
    });
  try {
    await checkPublicUrl(url, { allowAddresses: policy.allowAddresses });
  } catch (error) {
    if (error instanceof FetchError) throw refuse(REASONS[error.reason] ?? REASONS.bad_url!);
    throw error;
  }
}
