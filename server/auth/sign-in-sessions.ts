import { randomBytes } from 'node:crypto';
import { hashKey } from '../api-keys.js';
import type { AccountSession, SignedInAccount } from '../store/account-store.js';
import type { EventStore } from '../store/event-store.js';

/** How long a sign-in lasts. */
export interface SessionLifetimes {
  /** A session unused this long has ended, ms. @default 12 hours */
  idleMs?: number;
  /** A session this old has ended however busy, ms. @default 7 days */
  absoluteMs?: number;
}

/** The defaults of {@link SessionLifetimes}. */
export const DEFAULT_SESSION_LIFETIMES: Readonly<Required<SessionLifetimes>> = { idleMs: 12 * 3_600_000, absoluteMs: 7 * 86_400_000 };

/**
 * A session's last-seen time is written at most this often: a dashboard asks for a dozen reports
 * per view, and one write per request would be a write per report.
 */
const TOUCH_EVERY_MS = 60_000;

/** The sessions of signed-in accounts: start, look up (with expiry), end. */
export interface SignInSessions {
  readonly lifetimes: Readonly<Required<SessionLifetimes>>;
  /** Starts a session: the token for the cookie (shown to no one else) and what is stored. */
  start(accountId: string): Promise<{ token: string; session: AccountSession }>;
  /**
   * The live session of a cookie's token and its account, or null: none, its account disabled or
   * gone, or expired (then deleted).
   */
  resolve(token: string): Promise<SignedInAccount | null>;
  /** Ends the session of a token (sign-out); true when there was one. */
  end(token: string): Promise<boolean>;
  /** The stored id of a token: its SHA-256, as keys are stored. */
  idOf(token: string): string;
}

/** Creates the sessions over `store`, on the server's clock. */
export function createSignInSessions(options: { store: EventStore; now: () => number; lifetimes?: SessionLifetimes }): SignInSessions {
  const { store, now } = options;
  const lifetimes = { ...DEFAULT_SESSION_LIFETIMES, ...options.lifetimes };
  const idOf = (token: string): string => hashKey(token);
  return {
    lifetimes,
    idOf,
    async start(accountId) {
      const at = now();
      // Sessions abandoned without a sign-out are removed here, at the rate of sign-ins.
      await store.deleteExpiredAccountSessions(at - lifetimes.idleMs, at - lifetimes.absoluteMs);
      // 256 random bits, base64url: the cookie's value.
      const token = randomBytes(32).toString('base64url');
      const session: AccountSession = { id: idOf(token), accountId, createdAt: at, lastSeenAt: at };
      await store.createAccountSession(session);
      return { token, session };
    },
    async resolve(token) {
      const found = await store.findAccountSession(idOf(token));
      if (found === null) return null;
      const at = now();
      const { session } = found;
      if (at - session.lastSeenAt >= lifetimes.idleMs || at - session.createdAt >= lifetimes.absoluteMs) {
        await store.deleteAccountSession(session.id);
        return null;
      }
      if (at - session.lastSeenAt >= TOUCH_EVERY_MS) await store.touchAccountSession(session.id, at);
      return found;
    },
    end: (token) => store.deleteAccountSession(idOf(token)),
  };
}
