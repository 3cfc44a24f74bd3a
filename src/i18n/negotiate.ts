import Negotiator from 'negotiator';

export type Lang = 'en' | 'ru';
/** The languages we speak; the first is the default and wins ties. */
export const LANGS: readonly Lang[] = ['en', 'ru'];

function pick(tag: string): Lang | null {
  const primary = tag.trim().toLowerCase().split('-')[0] ?? '';
  return (LANGS as readonly string[]).includes(primary) ? (primary as Lang) : null;
}

/**
 * Language of a response: `?lang=` first, then Accept-Language (CONTRACT §8), default English.
 * negotiator ranks the header (RFC 9110 §12.5.4): the highest q-value wins, `q=0` means "not
 * acceptable", `ru-RU` counts for `ru`, `*` stands for any language not named otherwise, and ties
 * keep the header's order, then ours (English first).
 */
export function negotiateLang(queryLang: unknown, acceptLanguage: string | undefined): Lang {
  if (typeof queryLang === 'string') {
    const fromQuery = pick(queryLang);
    if (fromQuery) return fromQuery;
  }
  if (!acceptLanguage) return 'en';
  const best = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).language(LANGS);
  return (best as Lang | undefined) ?? 'en';
}
