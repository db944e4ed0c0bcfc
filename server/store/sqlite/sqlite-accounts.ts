import type Database from 'better-sqlite3';
import type { Account, AccountRole, AccountSession, AccountStore, SharedLink } from '../account-store.js';
import { StoreError } from '../store-error.js';

interface AccountDbRow {
  id: string;
  email: string;
  role: AccountRole;
  password_hash: string;
  created_at: number;
  disabled_at: number | null;
}

interface SessionDbRow {
  id: string;
  account_id: string;
  created_at: number;
  last_seen_at: number;
}

interface LinkDbRow {
  id: string;
  project_id: string;
  hash: string;
  prefix: string;
  name: string;
  created_at: number;
  created_by: string | null;
  revoked_at: number | null;
}

const toAccount = (row: AccountDbRow): Account => ({
  id: row.id,
  email: row.email,
  role: row.role,
  passwordHash: row.password_hash,
  createdAt: row.created_at,
  disabledAt: row.disabled_at,
});

const toSession = (row: SessionDbRow): AccountSession => ({ id: row.id, accountId: row.account_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at });

const toLink = (row: LinkDbRow): SharedLink => ({
  id: row.id,
  projectId: row.project_id,
  hash: row.hash,
  prefix: row.prefix,
  name: row.name,
  createdAt: row.created_at,
  createdBy: row.created_by,
  revokedAt: row.revoked_at,
});

function constraintError(error: unknown, what: string, parent: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') return new StoreError('DUPLICATE', `${what} already exists.`, { cause: error });
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return new StoreError('UNKNOWN_PROJECT', `${what}: the ${parent} does not exist.`, { cause: error });
  return error;
}


/**
 * The {@link AccountStore} of the SQLite store (`connection` gives the request thread's connection
 * and throws when the store is not open), on the request thread's connection, as projects and
 * keys are: a handful of rows read per dashboard request, never on the ingest path. Statements are
 * prepared once per connection.
 */
export function createSqliteAccounts(connection: () => Database.Database): AccountStore {
  const prepared = new WeakMap<Database.Database, Map<string, Database.Statement>>();
  const statement = (sql: string): Database.Statement => {
    const db = connection();
    let cache = prepared.get(db);
    if (cache === undefined) prepared.set(db, (cache = new Map()));
    let s = cache.get(sql);
    if (s === undefined) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };

  return {
    async createAccount(account) {
      try {
        statement('INSERT INTO accounts (id, email, role, password_hash, created_at, disabled_at) VALUES (?, ?, ?, ?, ?, ?)').run(
          account.id,
          account.email,
          account.role,
          account.passwordHash,
          account.createdAt,
          account.disabledAt,
        );
      } catch (error) {
        throw constraintError(error, `Account ${account.email}`, 'account');
      }
    },

    async getAccount(accountId) {
      const row = statement('SELECT * FROM accounts WHERE id = ?').get(accountId) as AccountDbRow | undefined;
      return row ? toAccount(row) : null;
    },

    async findAccountByEmail(email) {
      const row = statement('SELECT * FROM accounts WHERE email = ?').get(email) as AccountDbRow | undefined;
      return row ? toAccount(row) : null;
    },

    async listAccounts() {
      return (statement('SELECT * FROM accounts ORDER BY created_at, id').all() as AccountDbRow[]).map(toAccount);
    },

    async updateAccount(accountId, changes) {
      const db = connection();
      // One transaction: a disabled account or a changed password never has a session left over.
      return db.transaction(() => {
        if (statement('SELECT 1 FROM accounts WHERE id = ?').get(accountId) === undefined) return false;
        if (changes.role !== undefined) statement('UPDATE accounts SET role = ? WHERE id = ?').run(changes.role, accountId);
        if (changes.passwordHash !== undefined) {
          statement('UPDATE accounts SET password_hash = ? WHERE id = ?').run(changes.passwordHash, accountId);
          statement('DELETE FROM account_sessions WHERE account_id = ? AND id <> ?').run(accountId, changes.keepSessionId ?? '');
        }
        if (changes.disabledAt !== undefined) {
          statement('UPDATE accounts SET disabled_at = ? WHERE id = ?').run(changes.disabledAt, accountId);
          if (changes.disabledAt !== null) statement('DELETE FROM account_sessions WHERE account_id = ?').run(accountId);
        }
        return true;
      }).immediate();
    },

    async deleteAccount(accountId) {
      // The sessions go with it (ON DELETE CASCADE).
      return statement('DELETE FROM accounts WHERE id = ?').run(accountId).changes > 0;
    },

    async createAccountSession(session) {
      try {
        statement('INSERT INTO account_sessions (id, account_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)').run(
          session.id,
          session.accountId,
          session.createdAt,
          session.lastSeenAt,
        );
      } catch (error) {
        throw constraintError(error, 'The session', 'account');
      }
    },

    async findAccountSession(sessionId) {
      const row = statement(
        `SELECT s.id AS s_id, s.account_id, s.created_at AS s_created_at, s.last_seen_at, a.*
         FROM account_sessions s JOIN accounts a ON a.id = s.account_id
         WHERE s.id = ? AND a.disabled_at IS NULL`,
      ).get(sessionId) as (AccountDbRow & { s_id: string; account_id: string; s_created_at: number; last_seen_at: number }) | undefined;
      if (row === undefined) return null;
      return {
        session: toSession({ id: row.s_id, account_id: row.account_id, created_at: row.s_created_at, last_seen_at: row.last_seen_at }),
        account: toAccount(row),
      };
    },

    async touchAccountSession(sessionId, at) {
      statement('UPDATE account_sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?').run(at, sessionId, at);
    },

    async deleteAccountSession(sessionId) {
      return statement('DELETE FROM account_sessions WHERE id = ?').run(sessionId).changes > 0;
    },

    async deleteExpiredAccountSessions(lastSeenBefore, createdBefore) {
      return statement('DELETE FROM account_sessions WHERE last_seen_at < ? OR created_at < ?').run(lastSeenBefore, createdBefore).changes;
    },

    async createSharedLink(link) {
      try {
        statement(
          'INSERT INTO shared_links (id, project_id, hash, prefix, name, created_at, created_by, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        ).run(link.id, link.projectId, link.hash, link.prefix, link.name, link.createdAt, link.createdBy, link.revokedAt);
      } catch (error) {
        throw constraintError(error, `Link ${link.id}`, 'project');
      }
    },

    async findSharedLink(hash) {
      const row = statement('SELECT * FROM shared_links WHERE hash = ? AND revoked_at IS NULL').get(hash) as LinkDbRow | undefined;
      return row ? toLink(row) : null;
    },

    async listSharedLinks(projectId) {
      return (statement('SELECT * FROM shared_links WHERE project_id = ? ORDER BY created_at, id').all(projectId) as LinkDbRow[]).map(toLink);
    },

    async revokeSharedLink(projectId, linkId, at) {
      return statement('UPDATE shared_links SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL').run(at, linkId, projectId).changes > 0;
    },
  };
}
