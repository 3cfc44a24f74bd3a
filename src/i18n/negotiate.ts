export type Lang = 'en' | 'ru';
export const LANGS: readonly Lang[] = ['en', 'ru'];

function pick(tag: string): Lang | null {
  const primary = tag.trim().toLowerCase().split('-')[0] ?? '';
  return (LANGS as readonly string[]).includes(primary) ? (primary as Lang) : null;
}

/**
 * Language of a response: `?lang=` first, then Accept-Language with q-values, default English
 * (CONTRACT §8). Ties keep the header's order; `q=0` means "not acceptable".
 */
export function negotiateLang(queryLang: unknown, acceptLanguage: string | undefined): Lang {
  if (typeof queryLang === 'string') {
    const fromQuery = pick(queryLang);
    if (fromQuery) return fromQuery;
  }
  if (!acceptLanguage) return 'en';
  const ranges = acceptLanguage
    .split(',')
    .map((part, order) => {
      const [tag = '', ...params] = part.split(';');
      const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const q = qParam ? Number(qParam.slice(2)) : 1;
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, order };
    })
    .filter((r) => r.q > 0 && r.tag !== '')
    .sort((a, b) => b.q - a.q || a.order - b.order);
  for (const range of ranges) {
    if (range.tag === '*') return 'en';
    const lang = pick(range.tag);
    if (lang) return lang;
  }
  return 'en';
}
