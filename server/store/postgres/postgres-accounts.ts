import type pg from 'pg';
import type { Account, AccountRole, AccountStore, SharedLink } from '../account-store.js';
import { StoreError } from '../store-error.js';
import { num, type Row } from './postgres-rows.js';

const toAccount = (row: Row): Account => ({
  id: row.id as string,
  email: row.email as string,
  role: row.role as AccountRole,
  passwordHash: row.password_hash as string,
  createdAt: num(row.created_at),
  disabledAt: row.disabled_at === null ? null : num(row.disabled_at),
});

const toLink = (row: Row): SharedLink => ({
  id: row.id as string,
  projectId: row.project_id as string,
  hash: row.hash as string,
  prefix: row.prefix as string,
  name: row.name as string,
  createdAt: num(row.created_at),
  createdBy: row.created_by as string | null,
  revokedAt: row.revoked_at === null ? null : num(row.revoked_at),
});

function constraintError(error: unknown, what: string, parent: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === '23505') return new StoreError('DUPLICATE', `${what} already exists.`, { cause: error });
  if (code === '23503') return new StoreError('UNKNOWN_PROJECT', `${what}: the ${parent} does not exist.`, { cause: error });
  return error;
}

/** What {@link createPostgresAccounts} runs its statements through. */
export interface PostgresAccountsDeps {
  /** One statement on the pool; rejects when the store is not open. */
  query(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>>;
  /** Runs `work` in one transaction on one connection. */
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}

/**
 * The {@link AccountStore} of the PostgreSQL store: plain statements on the pool, uncached, so that
 * a change by any process (a sign-out, a disabled account, a revoked link) counts on the next request.
 */
export function createPostgresAccounts({ query, transaction }: PostgresAccountsDeps): AccountStore {
  return {
    async createAccount(account) {
      try {
        await query('INSERT INTO accounts (id, email, role, password_hash, created_at, disabled_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          account.id,
          account.email,
          account.role,
          account.passwordHash,
          account.createdAt,
          account.disabledAt,
        ]);
      } catch (error) {
        throw constraintError(error, `Account ${account.email}`, 'account');
      }
    },

    async getAccount(accountId) {
      const { rows } = await query('SELECT * FROM accounts WHERE id = $1', [accountId]);
      return rows[0] ? toAccount(rows[0]) : null;
    },

    async findAccountByEmail(email) {
      const { rows } = await query('SELECT * FROM accounts WHERE email = $1', [email]);
      return rows[0] ? toAccount(rows[0]) : null;
    },

    async listAccounts() {
      return (await query('SELECT * FROM accounts ORDER BY created_at, id')).rows.map(toAccount);
    },

    async updateAccount(accountId, changes) {
      // One transaction: a disabled account or a changed password never has a session left over.
      return transaction(async (client) => {
        const found = await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
        if (found.rowCount === 0) return false;
        if (changes.role !== undefined) await client.query('UPDATE accounts SET role = $1 WHERE id = $2', [changes.role, accountId]);
        if (changes.passwordHash !== undefined) {
          await client.query('UPDATE accounts SET password_hash = $1 WHERE id = $2', [changes.passwordHash, accountId]);
          await client.query('DELETE FROM account_sessions WHERE account_id = $1 AND id <> $2', [accountId, changes.keepSessionId ?? '']);
        }
        if (changes.disabledAt !== undefined) {
          await client.query('UPDATE accounts SET disabled_at = $1 WHERE id = $2', [changes.disabledAt, accountId]);
          if (changes.disabledAt !== null) await client.query('DELETE FROM account_sessions WHERE account_id = $1', [accountId]);
        }
        return true;
      });
    },

    async deleteAccount(accountId) {
      // The sessions go with it (ON DELETE CASCADE).
      return (await query('DELETE FROM accounts WHERE id = $1', [accountId])).rowCount === 1;
    },

    async createAccountSession(session) {
      try {
        await query('INSERT INTO account_sessions (id, account_id, created_at, last_seen_at) VALUES ($1, $2, $3, $4)', [
          session.id,
          session.accountId,
          session.createdAt,
          session.lastSeenAt,
        ]);
      } catch (error) {
        throw constraintError(error, 'The session', 'account');
      }
    },

    async findAccountSession(sessionId) {
      const { rows } = await query(
        `SELECT s.id AS s_id, s.account_id, s.created_at AS s_created_at, s.last_seen_at, a.*
         FROM account_sessions s JOIN accounts a ON a.id = s.account_id
         WHERE s.id = $1 AND a.disabled_at IS NULL`,
        [sessionId],
      );
      const row = rows[0];
      if (row === undefined) return null;
      return {
        session: { id: row.s_id as string, accountId: row.account_id as string, createdAt: num(row.s_created_at), lastSeenAt: num(row.last_seen_at) },
        account: toAccount(row),
      };
    },

    async touchAccountSession(sessionId, at) {
      await query('UPDATE account_sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $1', [at, sessionId]);
    },

    async deleteAccountSession(sessionId) {
      return (await query('DELETE FROM account_sessions WHERE id = $1', [sessionId])).rowCount === 1;
    },

    async deleteExpiredAccountSessions(lastSeenBefore, createdBefore) {
      return (await query('DELETE FROM account_sessions WHERE last_seen_at < $1 OR created_at < $2', [lastSeenBefore, createdBefore])).rowCount ?? 0;
    },

    async createSharedLink(link) {
      try {
        await query(
          'INSERT INTO shared_links (id, project_id, hash, prefix, name, created_at, created_by, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
          [link.id, link.projectId, link.hash, link.prefix, link.name, link.createdAt, link.createdBy, link.revokedAt],
        );
      } catch (error) {
        throw constraintError(error, `Link ${link.id}`, 'project');
      }
    },

    async findSharedLink(hash) {
      const { rows } = await query('SELECT * FROM shared_links WHERE hash = $1 AND revoked_at IS NULL', [hash]);
      return rows[0] ? toLink(rows[0]) : null;
    },

    async listSharedLinks(projectId) {
      return (await query('SELECT * FROM shared_links WHERE project_id = $1 ORDER BY created_at, id', [projectId])).rows.map(toLink);
    },

    async revokeSharedLink(projectId, linkId, at) {
      const result = await query('UPDATE shared_links SET revoked_at = $1 WHERE id = $2 AND project_id = $3 AND revoked_at IS NULL', [at, linkId, projectId]);
      return result.rowCount === 1;
    },
  };
}
