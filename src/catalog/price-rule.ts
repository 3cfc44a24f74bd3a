/**
 * Declarative price rules: each mode's price is built from one of these, and the same declaration
 * renders the sentence docs/models.md shows for it and names every rate it may read. The amount and
 * its description come from one table, so the documented price cannot drift from the charged one.
 */
import type { ModeInputs, PriceRates } from './model-spec.ts';
import { rate } from './model-spec.ts';

/** How a mode's price is computed: the amount, its description and the rates it reads. */
export interface PriceRule<S> {
  /** Amount in kopecks. Pure: the same answer for /v1/price and the hold (CONTRACT §5). */
  price(settings: S, inputs: ModeInputs, rates: PriceRates): number;
  /** One Markdown sentence naming the rates, for docs/models.md. */
  readonly description: string;
  /** Every rate of the model's price table the rule may read. */
  readonly rates: readonly string[];
}

/** The rate a price starts from: one fixed name, or one per value of a setting. */
export interface RateRef<S> {
  /** Every name it may pick. */
  readonly names: readonly string[];
  /** How the description names it: `picture`, `second_<quality>`. */
  readonly text: string;
  pick(settings: S): string;
}

/** A count the rate is multiplied by, with the words that describe it. */
export interface Quantity<S> {
  readonly text: string;
  count(settings: S, inputs: ModeInputs): number;
}

/** A rate added on top of the base `times` times (0 when it does not apply). */
export interface Surcharge<S> {
  readonly rate: string;
  /** When or how often it applies: `when pbr is true`, `for each started 30 s ...`. */
  readonly when: string;
  times(settings: S, inputs: ModeInputs): number;
}

/** The rate called `name`. */
export function fixedRate(name: string): RateRef<unknown> {
  return { names: [name], text: name, pick: () => name };
}

/** The rate `<prefix><value of field>`, for example `second_720p` for quality 720p. */
export function rateBySetting<K extends string>(
  prefix: string,
  field: K,
  values: readonly string[],
): RateRef<Readonly<Record<K, string>>> {
  return {
    names: values.map((value) => `${prefix}${value}`),
    text: `${prefix}<${field}>`,
    pick: (s) => `${prefix}${s[field]}`,
  };
}

/** A setting counted as it is (`n`, `duration`). */
export function settingCount<K extends string>(field: K): Quantity<Readonly<Record<K, number>>> {
  return { text: field, count: (s) => s[field] };
}

/** A surcharge named like the boolean setting that turns it on. */
export function flagSurcharge<K extends string>(field: K): Surcharge<Partial<Readonly<Record<K, unknown>>>> {
  return { rate: field, when: 'when true', times: (s) => (s[field] === true ? 1 : 0) };
}

function code(name: string): string {
  return `\`${name}\``;
}

function sentence(head: string, notes: readonly string[]): string {
  return `${[head, ...notes].join('; ')}.`;
}

/** `rate × units`, for example `second_<quality>` × output seconds. */
export function perUnit<R, U>(rule: {
  rate: RateRef<R>;
  units: Quantity<U>;
  notes?: readonly string[];
}): PriceRule<R & U> {
  return {
    price: (s, inputs, rates) => rate(rates, rule.rate.pick(s)) * rule.units.count(s, inputs),
    description: sentence(`${code(rule.rate.text)} × ${rule.units.text}`, rule.notes ?? []),
    rates: rule.rate.names,
  };
}

/**
 * Surcharges in words: `+ a when x, + b when y`; neighbours that apply alike are grouped
 * (`+ quad, smart_low_poly each when true`).
 */
function describeSurcharges(surcharges: readonly Surcharge<never>[]): string {
  const groups: { rates: string[]; when: string }[] = [];
  for (const { rate: name, when } of surcharges) {
    const last = groups.at(-1);
    if (last?.when === when) last.rates.push(name);
    else groups.push({ rates: [name], when });
  }
  return groups
    .map(({ rates, when }) => `+ ${rates.map(code).join(', ')} ${rates.length > 1 ? 'each ' : ''}${when}`)
    .join(', ');
}

/** A base rate plus surcharges; without surcharges the price is flat. */
export function baseWithSurcharges<S>(rule: {
  base: RateRef<S>;
  surcharges: readonly Surcharge<S>[];
  notes?: readonly string[];
}): PriceRule<S> {
  const { base, surcharges } = rule;
  const extras = surcharges.length === 0 ? ', flat' : ` ${describeSurcharges(surcharges)}`;
  return {
    price: (s, inputs, rates) =>
      surcharges.reduce(
        (sum, extra) => {
          // A surcharge that does not apply reads no rate, as the hand-written prices did.
          const times = extra.times(s, inputs);
          return times === 0 ? sum : sum + times * rate(rates, extra.rate);
        },
        rate(rates, base.pick(s)),
      ),
    description: sentence(`${code(base.text)}${extras}`, rule.notes ?? []),
    rates: [...base.names, ...surcharges.map((extra) => extra.rate)],
  };
}
