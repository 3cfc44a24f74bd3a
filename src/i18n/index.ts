import type { MessageParams } from '../errors.ts';
import { en } from './en.ts';
import { format, type MessageKey } from './messages.ts';
import type { Lang } from './negotiate.ts';
import { ru } from './ru.ts';

export { type MessageKey, plural, ruDecimal } from './messages.ts';
export { LANGS, type Lang, negotiateLang } from './negotiate.ts';

const catalogs = { en, ru } as const;

/** The human message of an error or failure code in the given language. */
export function translate(key: MessageKey, lang: Lang, params: MessageParams = {}): string {
  return format(catalogs[lang][key], params, lang);
}
