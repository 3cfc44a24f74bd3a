/**
 * Address policy for downloads of caller-supplied URLs (CONTRACT §6: never from loopback, private,
 * link-local or metadata addresses). Fails closed: anything that is not a well-formed IPv4 or IPv6
 * address is blocked. IPv6 forms that embed an IPv4 address (mapped, compatible, translated, NAT64,
 * 6to4) are judged by the embedded address; IPv6 outside global unicast 2000::/3 is blocked.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** IPv4 ranges that are never fetched from: [network as u32, prefix length, reason]. */
const BLOCKED_V4: ReadonlyArray<readonly [number, number, string]> = [
  [v4('0.0.0.0'), 8, 'this network / unspecified'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local, cloud metadata 169.254.169.254'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignments'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, '6to4 relay anycast'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved, broadcast'],
];

/** Dotted-quad IPv4 to an unsigned 32-bit number (input already validated). */
function v4(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inV4Range(ip: number, network: number, prefix: number): boolean {
  const size = 2 ** (32 - prefix);
  return ip >= network && ip < network + size;
}

function isBlockedV4(ip: number): boolean {
  return BLOCKED_V4.some(([network, prefix]) => inV4Range(ip, network, prefix));
}

/** Parses IPv6 text (zone id allowed, dotted IPv4 tail allowed) into eight 16-bit groups, or null. */
export function parseIPv6(text: string): number[] | null {
  const address = text.replace(/%.*$/, '');
  if (!isIPv6(address)) return null;
  let head = address;
  const tail: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted?.[1]) {
    if (!isIPv4(dotted[1])) return null;
    const value = v4(dotted[1]);
    tail.push(Math.floor(value / 65536), value % 65536);
    head = address.slice(0, dotted.index + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const parse = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16));
  const [left = '', right] = head.split('::');
  const leftGroups = parse(left);
  const rightGroups = [...(right === undefined ? [] : parse(right)), ...tail];
  const fillCount = 8 - leftGroups.length - rightGroups.length;
  if (right === undefined ? fillCount !== 0 : fillCount < 0) return null;
  const groups = [
    ...leftGroups,
    ...new Array<number>(right === undefined ? 0 : fillCount).fill(0),
    ...rightGroups,
  ];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null;
}

function embeddedV4(high: number, low: number): number {
  return high * 65536 + low;
}

function isBlockedV6(g: readonly number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const last32 = embeddedV4(g6, g7);
  const zero64 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  // ::/96 (unspecified, loopback ::1, IPv4-compatible), ::ffff:0:0/96 (mapped), ::ffff:0:0:0/96 (translated).
  if (zero64 && ((g4 === 0 && (g5 === 0 || g5 === 0xffff)) || (g4 === 0xffff && g5 === 0))) {
    return isBlockedV4(last32);
  }
  // NAT64 well-known prefix 64:ff9b::/96 carries the IPv4 address in its last 32 bits.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return isBlockedV4(last32);
  // Everything else outside global unicast 2000::/3: ::/8 rest, 64:ff9b:1::/48, 100::/64, fc00::/7,
  // fe80::/10, fec0::/10, ff00::/8 and unassigned space.
  if (g0 < 0x2000 || g0 > 0x3fff) return true;
  // 6to4 2002::/16 carries the IPv4 address in bits 16..47.
  if (g0 === 0x2002) return isBlockedV4(embeddedV4(g1, g2));
  // Teredo 2001::/32 (tunnels to arbitrary IPv4), benchmarking 2001:2::/48, ORCHID 2001:10::/28 and
  // 2001:20::/28, documentation 2001:db8::/32 and 3fff::/20.
  if (g0 === 0x2001 && (g1 === 0 || g1 === 0xdb8 || (g1 === 2 && g2 === 0) || (g1 >= 0x10 && g1 <= 0x2f))) {
    return true;
  }
  return g0 === 0x3fff && g1 <= 0x0fff;
}

/**
 * Whether downloads must never connect to `ip` (an IPv4 dotted quad or IPv6 text, with or without
 * brackets or zone id). Anything unparsable is blocked.
 */
export function isBlockedAddress(ip: string): boolean {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (isIPv4(text)) return isBlockedV4(v4(text));
  const groups = parseIPv6(text);
  return groups === null ? true : isBlockedV6(groups);
}
