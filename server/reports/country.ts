import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { type CountryResponse, Reader } from 'mmdb-lib';
import { normalizeIp } from '../ip-address.js';

/*
 * The country of a client address, for the `country` report column (docs/protocol.md, "Report
 * columns"; docs/decisions.md, "Country from the client address"). The batch route asks once per
 * request, with the full address before it is truncated; only the two-letter code is stored. The
 * database is the one the package `@ip-location-db/geo-whois-asn-country-mmdb` ships (an MMDB file
 * of networks and their country, from the regional internet registries' data), read with
 * `mmdb-lib`; updating that package updates the data.
 */

/** What the bundled database holds for a network: `{ country_code: 'GB' }`. */
type CountryRecord = CountryResponse & { readonly country_code?: unknown };

/**
 * Networks that are nobody's country: private, loopback, link-local, shared (carrier NAT),
 * documentation, benchmarking, multicast and reserved ranges (the IANA special-purpose registries),
 * and IPv6 forms that carry an IPv4 address of their own (NAT64, 6to4, Teredo). Checked before the
 * database, which gives some of them a country (a registry's record of a whole block). No entry for
 * IPv4-mapped IPv6 (`::ffff:0:0/96`): `BlockList` checks IPv4 addresses as mapped ones too, so it
 * would hold every IPv4 address; the IPv4 ranges above cover the mapped forms instead.
 */
const NOT_PUBLIC_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const NOT_PUBLIC_V6: ReadonlyArray<readonly [string, number]> = [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];

function notPublicNetworks(): BlockList {
  const list = new BlockList();
  for (const [address, bits] of NOT_PUBLIC_V4) list.addSubnet(address, bits, 'ipv4');
  for (const [address, bits] of NOT_PUBLIC_V6) list.addSubnet(address, bits, 'ipv6');
  return list;
}

/** Finds the country of client addresses. */
export interface CountryLookup {
  /**
   * The ISO 3166-1 alpha-2 code (upper case) of the country the address is in; null for no
   * address, one that is not an IP address, one of a private or otherwise non-public network, and
   * one the database does not know.
   */
  countryOf(ip: string | null): string | null;
}

/** Options of {@link createCountryLookup}. */
export interface CountryLookupOptions {
  /** Reads the MMDB database. @default the bundled database, read once per process ({@link readBundledDatabase}) */
  readDatabase?: () => Buffer;
  /**
   * Told, once, that the database could not be read; the lookup then answers null for every
   * address, so that events are still stored, without a country.
   * @default undefined (the error is thrown, by this and every later lookup)
   */
  onError?: (error: unknown) => void;
}

let bundled: Buffer | undefined;

/**
 * The bundled database's bytes, read on the first call and kept: every lookup of the process (each
 * app a process runs, the tests' many) shares the one copy, which is some megabytes.
 * @throws Error when the package's file cannot be found or read
 */
export function readBundledDatabase(): Buffer {
  // Resolved from this file, in the repository and in the installed server package alike. The
  // specifier stays a literal beside `resolve`: the packaging test finds the package there.
  bundled ??= readFileSync(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb'));
  return bundled;
}

/**
 * Creates a lookup. The database is read and opened on the first address that needs it, not
 * before: a process that stores no events (the CLI's key commands, a read-only replica) never
 * reads it, and one that does reads it once (synchronously, some megabytes). A lookup walks the
 * database's tree of networks, at most one step per bit of the address: cheap enough for the batch
 * route to do one per request without a cache.
 */
export function createCountryLookup(options: CountryLookupOptions = {}): CountryLookup {
  const readDatabase = options.readDatabase ?? readBundledDatabase;
  const notPublic = notPublicNetworks();
  // undefined until the first lookup; null when the database could not be read and onError was told.
  let reader: Reader<CountryRecord> | null | undefined;
  const open = (): Reader<CountryRecord> | null => {
    if (reader !== undefined) return reader;
    try {
      reader = new Reader<CountryRecord>(readDatabase());
    } catch (error) {
      if (options.onError === undefined) throw error;
      reader = null;
      options.onError(error);
    }
    return reader;
  };
  return {
    countryOf(ip) {
      if (ip === null) return null;
      // An IPv4-mapped IPv6 address is looked up as the IPv4 address it carries.
      const address = normalizeIp(ip);
      if (address === null) return null;
      const v4 = isIPv4(address);
      if (!v4 && !isIPv6(address)) return null;
      if (notPublic.check(address, v4 ? 'ipv4' : 'ipv6')) return null;
      const database = open();
      if (database === null) return null;
      const code = database.get(address)?.country_code;
      return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
    },
  };
}
