import { isIPv4, isIPv6 } from 'node:net';

/**
 * Truncates an address for privacy (docs/decisions.md, "IP address truncation"): the last octet of
 * IPv4, the last 80 bits of IPv6. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is treated as the IPv4 it
 * carries.
 */
export function truncateIp(address: string): string | null {
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIPv4(mapped)) return `${mapped.slice(0, mapped.lastIndexOf('.'))}.0`;
  if (!isIPv6(address)) return null;
  const groups = expandIpv6(address);
  // 128 − 80 = 48 bits kept: the first three groups.
  return `${groups.slice(0, 3).join(':')}::`;
}

/** Normalises an address to plain IPv4 where it is IPv4-mapped; null when it is no IP. */
export function normalizeIp(address: string): string | null {
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIPv4(mapped)) return mapped;
  return isIPv6(address) ? address : null;
}

function expandIpv6(address: string): string[] {
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  const groups = address.includes('::') ? [...left, ...Array<string>(missing).fill('0'), ...right] : left;
  return groups.map((g) => (g.includes('.') ? g : (g || '0').toLowerCase().replace(/^0+(?=.)/, '')));
}
