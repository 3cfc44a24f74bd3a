import ipaddr from 'ipaddr.js';

/**
 * An address as some proxies write it in X-Forwarded-For, with the client's port (`203.0.113.7:51234`,
 * `[2001:db8::1]:51234`) or in brackets (`[2001:db8::1]`): the address alone, else null.
 */
const WITH_PORT = /^(?:\[([^\]]+)\](?::\d{1,5})?|(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5})$/;

/**
 * The key under which a client's attempts are counted per address (wrong API keys and operator tokens,
 * sign-ins). An IPv6 client is counted by its /64: one subscriber or host commonly holds a whole /64, so
 * counted by the single address, every one of 2^64 addresses would bring a fresh budget. IPv4 (and IPv6
 * that maps IPv4) is counted by the address; a port or brackets a proxy wrote around it are dropped, since
 * a new source port per connection would bring a fresh budget too; anything unparsable as it is.
 */
export function clientAddressKey(address: string): string {
  const bare = WITH_PORT.exec(address);
  const ip = bare ? (bare[1] ?? bare[2] ?? address) : address;
  if (!ipaddr.isValid(ip)) return address;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}
