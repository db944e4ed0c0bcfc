import { hashKey } from '../api-keys.js';
import { randomId } from '../ids.js';
import type { SharedLink } from '../store/account-store.js';

/** The prefix of shared-link tokens, as keys have theirs (`sa_w_`, `sa_r_`, `sa_a_`). */
export const SHARED_LINK_PREFIX = 'sa_l_';

/**
 * Makes a read-only shared link of a project: the token (shown once, part of the link's address)
 * and the record to store, which keeps only its SHA-256. 32 random base62 characters, as keys have:
 * about 190 bits, so a fast hash is enough (docs/decisions.md, "Key kinds and hashing").
 */
export function generateSharedLink(projectId: string, options: { name: string; createdBy: string | null; now: number }): { token: string; link: SharedLink } {
  const token = randomId(SHARED_LINK_PREFIX, 32);
  return {
    token,
    link: {
      id: randomId('link_', 16),
      projectId,
      hash: hashKey(token),
      prefix: token.slice(0, 9),
      name: options.name,
      createdAt: options.now,
      createdBy: options.createdBy,
      revokedAt: null,
    },
  };
}

/** The dashboard's address of a link, under the server's base path: the token in the fragment, which no request carries. */
export function sharedLinkPath(basePath: string, token: string): string {
  return `${basePath}/dashboard/#/shared/${token}`;
}
