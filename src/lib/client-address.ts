import ipaddr from 'ipaddr.js';

/**
 * The key under which a client's attempts are counted per address (wrong API keys and operator tokens,
 * sign-ins). An IPv6 client is counted by its /64: one subscriber or host commonly holds a whole /64, so
 * counted by the single address, every one of 2^64 addresses would bring a fresh budget. IPv4 (and IPv6
 * that maps IPv4) is counted by the address; anything unparsable as it is.
 */
export function clientAddressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}
