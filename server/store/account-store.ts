/**
 * What a person signed in to the dashboard may do (docs/decisions.md, "Team access"): a viewer
 * reads reports, events and replays, as a read key does; an admin also erases and exports and
 * manages shared links, as an admin key does.
 */
export type AccountRole = 'viewer' | 'admin';

/** Every {@link AccountRole}, in the order the CLI's help names them. */
export const ACCOUNT_ROLES: readonly AccountRole[] = ['viewer', 'admin'];

/** A person who signs in to the dashboard, as stored. Accounts are server-wide: they see every project. */
export interface Account {
  id: string;
  /** Lower-cased, trimmed: one account per address whatever its spelling. */
  email: string;
  role: AccountRole;
  /**
   * The password's scrypt hash with its salt and parameters (`server/auth/password-hash.ts`); never
   * the password.
   */
  passwordHash: string;
  createdAt: number;
  /** When the account was disabled; a disabled account cannot sign in and has no sessions. */
  disabledAt: number | null;
}

/** What {@link AccountStore.updateAccount} may change. */
export interface AccountChanges {
  role?: AccountRole;
  /** A time disables the account and deletes its sessions in the same transaction; null enables it. */
  disabledAt?: number | null;
  /**
   * A new password hash: every session of the account is deleted in the same transaction, except
   * `keepSessionId` (the session that changed it).
   */
  passwordHash?: string;
  /** The session that survives a password change. */
  keepSessionId?: string;
}

/**
 * A signed-in session as stored. Its `id` is the SHA-256 of the cookie's secret, so that whoever
 * reads the database cannot take over a session (as with API keys).
 */
export interface AccountSession {
  id: string;
  accountId: string;
  createdAt: number;
  /** The last request seen with it, updated at most once a minute (`server/auth/sign-in-sessions.ts`). */
  lastSeenAt: number;
}

/** A live session with its account, as {@link AccountStore.findAccountSession} finds them. */
export interface SignedInAccount {
  session: AccountSession;
  account: Account;
}

/**
 * A read-only shared link of one project, as stored: only the SHA-256 of its token is kept. It
 * opens the project's reports and nothing else (no events list, no replays, no export or erasure).
 */
export interface SharedLink {
  id: string;
  projectId: string;
  /** Hex SHA-256 of the token. */
  hash: string;
  /** The first characters of the token, safe to show so an admin can tell links apart. */
  prefix: string;
  /** What the link is for, as its creator named it (may be empty). */
  name: string;
  createdAt: number;
  /** The account that made it; null when made with the CLI. */
  createdBy: string | null;
  revokedAt: number | null;
}

/**
 * The accounts, sign-in sessions and shared links of the dashboard (docs/decisions.md, "Team
 * access"). SQLite and PostgreSQL keep them beside projects and keys; the ClickHouse store hands
 * them to its configuration store. One contract suite (`account-store.contract.ts`) runs against each.
 */
export interface AccountStore {
  /** Stores a new account. @throws StoreError `DUPLICATE` when its id or email exists. */
  createAccount(account: Account): Promise<void>;
  getAccount(accountId: string): Promise<Account | null>;
  /** The account with this (lower-cased) email, disabled or not, or null. */
  findAccountByEmail(email: string): Promise<Account | null>;
  /** Every account, oldest first. */
  listAccounts(): Promise<Account[]>;
  /** Changes an account (see {@link AccountChanges}); resolves false when there is no such account. */
  updateAccount(accountId: string, changes: AccountChanges): Promise<boolean>;
  /** Deletes an account and all its sessions at once; resolves false when there was none. */
  deleteAccount(accountId: string): Promise<boolean>;

  /** Stores a new session; rejects when its account does not exist. */
  createAccountSession(session: AccountSession): Promise<void>;
  /**
   * The session with this id and its account, or null when there is none or the account is
   * disabled. Expiry is the caller's (it knows the clock and the limits).
   */
  findAccountSession(sessionId: string): Promise<SignedInAccount | null>;
  /** Records a request seen with the session at `at`. */
  touchAccountSession(sessionId: string, at: number): Promise<void>;
  /** Deletes one session (sign-out, expiry); resolves false when there was none. */
  deleteAccountSession(sessionId: string): Promise<boolean>;
  /**
   * Deletes sessions idle since before `lastSeenBefore` or made before `createdBefore`: those
   * expired. Resolves with how many.
   */
  deleteExpiredAccountSessions(lastSeenBefore: number, createdBefore: number): Promise<number>;

  /** Stores a new link. @throws StoreError `UNKNOWN_PROJECT` for a project that does not exist, `DUPLICATE` for an id or hash that does. */
  createSharedLink(link: SharedLink): Promise<void>;
  /** The live (not revoked) link with this token hash, or null. */
  findSharedLink(hash: string): Promise<SharedLink | null>;
  /** The project's links, revoked ones too, oldest first. */
  listSharedLinks(projectId: string): Promise<SharedLink[]>;
  /** Revokes a link of the project; resolves false when there was no such live link. */
  revokeSharedLink(projectId: string, linkId: string, at: number): Promise<boolean>;
}
