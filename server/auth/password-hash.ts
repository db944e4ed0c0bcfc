import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt's cost parameters, stored with each hash so that they can be raised without a migration. */
export interface ScryptParameters {
  /** CPU and memory cost, a power of two. @default 32768 (2^15) */
  N: number;
  /** Block size. @default 8 */
  r: number;
  /** Parallelism. @default 1 */
  p: number;
}

/**
 * The parameters of new hashes (docs/decisions.md, "Team access"): N = 2^15, r = 8, p = 1 takes
 * 32 MiB and tens of milliseconds per hash, which a sign-in can afford and an attacker holding a
 * copy of the database pays for every guess.
 */
export const DEFAULT_SCRYPT: Readonly<ScryptParameters> = { N: 32768, r: 8, p: 1 };

const SALT_BYTES = 16;
const HASH_BYTES = 32;

/**
 * Bounds on parameters read back from the database: a hash written by hand with N = 2^30 must not
 * make a sign-in allocate gigabytes.
 */
const MAX = { N: 1 << 20, r: 32, p: 16 } as const;

function derive(password: string, salt: Buffer, params: ScryptParameters, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Node refuses N·r·128 above `maxmem` (32 MiB by default); leave room for the largest allowed.
    scrypt(password.normalize('NFC'), salt, length, { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * Hashes a password with scrypt and a fresh random salt: `scrypt$N$r$p$salt$hash`, salt and hash
 * in base64. Runs on libuv's thread pool, not on the event loop.
 */
export async function hashPassword(password: string, params: ScryptParameters = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, params, HASH_BYTES);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** The parts of a stored hash, or null when it is not one {@link hashPassword} writes. */
function parse(stored: string): { params: ScryptParameters; salt: Buffer; hash: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const ok = (n: number, max: number) => Number.isInteger(n) && n >= 1 && n <= max;
  if (!ok(N, MAX.N) || (N & (N - 1)) !== 0 || N < 2 || !ok(r, MAX.r) || !ok(p, MAX.p)) return null;
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const hash = Buffer.from(parts[5] ?? '', 'base64');
  if (salt.length < 8 || hash.length < 16 || hash.length > 64) return null;
  return { params: { N, r, p }, salt, hash };
}

/**
 * True when `password` is the one `stored` was made from, compared in constant time
 * (`timingSafeEqual`), with the parameters stored beside it. A malformed `stored` is false.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (parsed === null) return false;
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.hash.length);
  return timingSafeEqual(candidate, parsed.hash);
}

/** The shortest password `user create` and a password change accept. */
export const MIN_PASSWORD_LENGTH = 10;

/**
 * Why a new password is refused, or null when it is acceptable: at least
 * {@link MIN_PASSWORD_LENGTH} characters, at most 1,000 (scrypt reads all of it).
 */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > 1000) return 'A password may have at most 1000 characters.';
  return null;
}
