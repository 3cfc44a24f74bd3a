/**
 * Address policy for downloads of caller-supplied URLs (CONTRACT §6: never from loopback, private,
 * link-local or metadata addresses). Fails closed: anything that is not a well-formed IPv4 or IPv6
 * address is blocked. IPv6 forms that embed an IPv4 address (mapped, compatible, translated, NAT64,
 * 6to4) are judged by the embedded address; IPv6 outside global unicast 2000::/3 is blocked.
 *
 * ipaddr.js parses and matches prefixes. Which spellings count as an address at all is decided by
 * `node:net` first: ipaddr.js also reads octal, hex and short IPv4 forms (`0x7f.1`, also as the tail
 * of an IPv6 address), which a URL host never means here, so they stay blocked as unparsable.
 */
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

type Prefix<T> = [T, number];

/** IPv4 ranges that are never fetched from, with the reason. */
const BLOCKED_V4: ReadonlyArray<Prefix<ipaddr.IPv4>> = [
  '0.0.0.0/8', // this network / unspecified
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata 169.254.169.254
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

/**
 * IPv6 prefixes whose last 32 bits are an IPv4 address: ::/96 (unspecified, loopback ::1,
 * IPv4-compatible), ::ffff:0:0/96 (mapped), ::ffff:0:0:0/96 (translated), 64:ff9b::/96 (NAT64).
 */
const EMBEDS_V4_AT_END: ReadonlyArray<Prefix<ipaddr.IPv6>> = [
  '::/96',
  '::ffff:0:0/96',
  '::ffff:0:0:0/96',
  '64:ff9b::/96',
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

/** 6to4 carries the IPv4 address in bits 16..47. */
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

/**
 * Everything outside global unicast 2000::/3 is blocked: ::/8 rest, 64:ff9b:1::/48, 100::/64,
 * fc00::/7, fe80::/10, fec0::/10, ff00::/8 and unassigned space.
 */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/** Special-purpose prefixes inside 2000::/3 that are never fetched from. */
const BLOCKED_V6: ReadonlyArray<Prefix<ipaddr.IPv6>> = [
  '2001::/32', // Teredo: tunnels to arbitrary IPv4
  '2001:2::/48', // benchmarking
  '2001:10::/28', // ORCHID
  '2001:20::/28', // ORCHIDv2
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

function isBlockedV4(ip: ipaddr.IPv4): boolean {
  return BLOCKED_V4.some((range) => ip.match(range));
}

/** The IPv4 address in bytes `at` … `at + 3` of an IPv6 address. */
function embeddedV4(ip: ipaddr.IPv6, at: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(ip.toByteArray().slice(at, at + 4));
}

function isBlockedV6(ip: ipaddr.IPv6): boolean {
  if (EMBEDS_V4_AT_END.some((range) => ip.match(range))) return isBlockedV4(embeddedV4(ip, 12));
  if (!ip.match(GLOBAL_UNICAST)) return true;
  if (ip.match(SIX_TO_FOUR)) return isBlockedV4(embeddedV4(ip, 2));
  return BLOCKED_V6.some((range) => ip.match(range));
}

/** Strict IPv6 text (zone id allowed) as an ipaddr.js address, or null. */
function toIPv6(text: string): ipaddr.IPv6 | null {
  const address = text.replace(/%.*$/, '');
  if (!isIPv6(address)) return null;
  try {
    return ipaddr.IPv6.parse(address);
  } catch {
    return null;
  }
}

/** Parses IPv6 text (zone id allowed, dotted IPv4 tail allowed) into eight 16-bit groups, or null. */
export function parseIPv6(text: string): number[] | null {
  return toIPv6(text)?.parts ?? null;
}

/**
 * Whether downloads must never connect to `ip` (an IPv4 dotted quad or IPv6 text, with or without
 * brackets or zone id). Anything unparsable is blocked.
 */
export function isBlockedAddress(ip: string): boolean {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (isIPv4(text)) return isBlockedV4(ipaddr.IPv4.parse(text));
  const v6 = toIPv6(text);
  return v6 === null ? true : isBlockedV6(v6);
}
