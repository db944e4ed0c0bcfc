import { BlockList, isIP } from 'node:net';
import type { Middleware } from 'koa';
import { normalizeIp } from './ip-address.js';

/**
 * Which peers may tell the server who their client is (docs/protocol.md, "Client address"). A
 * request whose connection comes from a trusted proxy has its `X-Forwarded-For` read from the
 * right: each proxy appends the address it saw, so the rightmost entry that is not itself a trusted
 * proxy is the client. Entries left of it were written by the client, which could choose its own
 * address (and rate-limit bucket, and stored IP) if they were believed. A request from any other
 * peer has its forwarding headers ignored.
 */
export interface TrustedProxies {
  /** The client's address: `peer` itself unless it is a trusted proxy. */
  clientAddress(peer: string | undefined, forwardedFor: string): string;
  /**
   * True when the connection's peer is a listed proxy, whose `X-Forwarded-Proto` then says whether
   * the client's request came over TLS (the session cookie's `Secure`, `server/auth/request-origin.ts`).
   */
  isTrusted(peer: string | undefined): boolean;
  /** The list as given, normalised, for logs and the CLI's answer. */
  readonly description: string;
}

/** What `--trust-proxy` without a list trusts: a proxy on this machine. */
export const LOOPBACK_PROXIES = 'loopback';

/**
 * Parses a comma-separated list of addresses and CIDR ranges (`127.0.0.1,10.0.0.0/8,fd00::/8`);
 * the word `loopback` stands for 127.0.0.0/8 and ::1.
 * @throws Error naming the entry that is neither an address nor a range
 */
export function parseTrustedProxies(spec: string): TrustedProxies {
  const list = new BlockList();
  const entries = spec
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('The list of trusted proxies is empty: give addresses or ranges, e.g. 127.0.0.1,10.0.0.0/8.');
  for (const entry of entries) {
    if (entry.toLowerCase() === LOOPBACK_PROXIES) {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
      continue;
    }
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const maxBits = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= maxBits && /^\d+$/.test(prefix ?? '')))) {
      throw new Error(`"${entry}" is not an IP address or a CIDR range (like 10.0.0.0/8).`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, bits, type);
  }
  const trusted = (address: string): boolean => list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return {
    description: entries.join(','),
    isTrusted(peer) {
      const address = normalizeIp(peer ?? '');
      return address !== null && trusted(address);
    },
    clientAddress(peer, forwardedFor) {
      let client = normalizeIp(peer ?? '');
      if (client === null) return peer ?? '';
      if (!trusted(client) || forwardedFor === '') return client;
      const hops = forwardedFor.split(',');
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = normalizeIp(stripPort((hops[i] as string).trim()));
        // An entry that is no address was not written by a proxy of ours: the client is the last
        // hop we can name, never something further left.
        if (hop === null) return client;
        client = hop;
        if (!trusted(hop)) return hop;
      }
      return client;
    },
  };
}

/** `1.2.3.4:5678` → `1.2.3.4`, `[::1]:80` → `::1`; anything else as it is. */
function stripPort(entry: string): string {
  if (entry.startsWith('[')) return entry.slice(1, entry.indexOf(']') === -1 ? undefined : entry.indexOf(']'));
  const colon = entry.indexOf(':');
  return colon !== -1 && colon === entry.lastIndexOf(':') ? entry.slice(0, colon) : entry;
}

/**
 * Sets `ctx.request.ip` from the connection and, when it comes from a trusted proxy, from
 * `X-Forwarded-For`; first in the chain, so the rate limits and the stored address agree.
 */
export function clientAddress(proxies: TrustedProxies): Middleware {
  return (ctx, next) => {
    ctx.request.ip = proxies.clientAddress(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'));
    return next();
  };
}
