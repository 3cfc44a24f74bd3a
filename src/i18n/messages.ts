import type { ErrorCode, MessageParams, TaskFailureCode } from '../errors.ts';
import type { Lang } from './negotiate.ts';

export type MessageKey = ErrorCode | TaskFailureCode;
/**
 * A message template: interpolates `{name}` from the error's params, and `{name|form|…}` as the word form
 * the number `name` takes (`plural`): English lists one|other, Russian one|few|many.
 */
export type Catalog = Readonly<Record<MessageKey, string>>;

/** The order a language lists its word forms in, by CLDR plural category. */
const FORMS: Record<Lang, readonly Intl.LDMLPluralRule[]> = {
  en: ['one', 'other'],
  ru: ['one', 'few', 'many'],
};
const rules = { en: new Intl.PluralRules('en'), ru: new Intl.PluralRules('ru') };

/**
 * The form of a counted word for the number `n` (1 задача, 2 задачи, 5 задач, 21 задача; 1 task, 2 tasks),
 * from the forms in the language's order; a category it does not list (Russian fractions) takes the last.
 */
export function plural(lang: Lang, n: number, forms: readonly string[]): string {
  const index = FORMS[lang].indexOf(rules[lang].select(n));
  return forms[index === -1 ? forms.length - 1 : index] ?? forms[forms.length - 1] ?? '';
}

/** A number as Russian writes it, with a decimal comma: `0,50`, `12,5` (English keeps the point). */
export function ruDecimal(value: number | string): string {
  return String(value).replace('.', ',');
}

/**
 * Fills `{name}` and `{name|form|…}` placeholders (a Russian number with its decimal comma); an unknown
 * placeholder stays as written.
 */
export function format(template: string, params: MessageParams, lang: Lang = 'en'): string {
  return template.replace(/\{(\w+)((?:\|[^|{}]*)*)\}/g, (whole, name: string, forms: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    if (forms === '') return lang === 'ru' && typeof value === 'number' ? ruDecimal(value) : String(value);
    const count = Number(value);
    return Number.isFinite(count) ? plural(lang, count, forms.slice(1).split('|')) : whole;
  });
}
