/**
 * The addresses YooKassa sends its notifications from (PROVIDERS.md §8), for the optional sender check
 * (`YOOKASSA_CHECK_IP=on`). The check is a second fence only: a notification never credits by itself,
 * the payment it names is always read back from YooKassa first (CONTRACT §14).
 *
 * Node's `net.BlockList` matches the ranges. It judges an IPv4-mapped IPv6 address (`::ffff:185.71.76.1`,
 * what a dual-stack listener reports for an IPv4 peer) by its IPv4 address, and only that embedding:
 * IPv4-compatible (`::185.71.76.1`) or NAT64 forms are other IPv6 addresses and never match.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * YooKassa's published sender ranges (PROVIDERS.md §8).
 * @see https://yookassa.ru/developers/using-api/webhooks
 */
export const YOOKASSA_SENDER_RANGES: readonly string[] = Object.freeze([
  '185.71.76.0/27',
  '185.71.77.0/27',
  '77.75.153.0/25',
  '77.75.156.11',
  '77.75.156.35',
  '77.75.154.128/25',
  '2a02:5180::/32',
]);

function listOf(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', prefix] = range.split('/');
    const family = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

const SENDERS = listOf(YOOKASSA_SENDER_RANGES);

/**
 * Whether `address` (a request's client address, `request.ip`) is one YooKassa sends notifications from.
 * Fails closed: anything that is not a well-formed IPv4 or IPv6 address is not.
 */
export function isYookassaSender(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (isIPv4(address)) return SENDERS.check(address, 'ipv4');
  if (isIPv6(address)) return SENDERS.check(address, 'ipv6');
  return false;
}
