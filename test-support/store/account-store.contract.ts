import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Account, AccountSession, SharedLink } from '../../server/store/account-store.js';
import { useStore, type MakeStore } from './event-store.contract-support.js';
import { T0, makeProject } from './event-store.fixtures.js';

/*
 * The contract of the dashboard's accounts, sign-in sessions and shared links
 * (`server/store/account-store.ts`), run against every store: SQLite, PostgreSQL, and ClickHouse,
 * which hands them to its configuration store. Every test makes its own accounts and projects, so
 * a database shared by the tests of a file never mixes their rows.
 */

const unique = (): string => randomBytes(6).toString('hex');

function makeAccount(overrides: Partial<Account> = {}): Account {
  const id = unique();
  return { id: `acct_${id}`, email: `person-${id}@example.com`, role: 'viewer', passwordHash: `scrypt$test$${id}`, createdAt: T0, disabledAt: null, ...overrides };
}

function makeSession(accountId: string, overrides: Partial<AccountSession> = {}): AccountSession {
  return { id: `sess_${unique()}`, accountId, createdAt: T0, lastSeenAt: T0, ...overrides };
}

function makeLink(projectId: string, overrides: Partial<SharedLink> = {}): SharedLink {
  const id = unique();
  return { id: `link_${id}`, projectId, hash: `hash-${id}`, prefix: 'sa_l_abcd', name: 'board', createdAt: T0, createdBy: null, revokedAt: null, ...overrides };
}

/** Registers the account contract for a store. */
export function describeAccountStore(name: string, makeStore: MakeStore): void {
  describe(`${name} store: AccountStore contract`, () => {
    const ctx = useStore(makeStore);

    describe('accounts', () => {
      it('stores an account and finds it by id and by email, as it was given', async () => {
        const account = makeAccount({ role: 'admin' });
        await ctx.store.createAccount(account);
        expect(await ctx.store.getAccount(account.id)).toEqual(account);
        expect(await ctx.store.findAccountByEmail(account.email)).toEqual(account);
        expect(await ctx.store.findAccountByEmail(`other-${account.email}`)).toBeNull();
        expect((await ctx.store.listAccounts()).map((a) => a.id)).toContain(account.id);
      });

      it('refuses a second account with the same email as DUPLICATE', async () => {
        const account = makeAccount();
        await ctx.store.createAccount(account);
        await expect(ctx.store.createAccount(makeAccount({ email: account.email }))).rejects.toMatchObject({ name: 'StoreError', code: 'DUPLICATE' });
      });

      it('changes the role, and answers false for an account that does not exist', async () => {
        const account = makeAccount();
        await ctx.store.createAccount(account);
        expect(await ctx.store.updateAccount(account.id, { role: 'admin' })).toBe(true);
        expect((await ctx.store.getAccount(account.id))?.role).toBe('admin');
        expect(await ctx.store.updateAccount('acct_missing', { role: 'admin' })).toBe(false);
      });
    });

    describe('sessions', () => {
      it('finds a session with its account, touches it, and deletes it', async () => {
        const account = makeAccount();
        await ctx.store.createAccount(account);
        const session = makeSession(account.id);
        await ctx.store.createAccountSession(session);
        expect(await ctx.store.findAccountSession(session.id)).toEqual({ session, account });
        await ctx.store.touchAccountSession(session.id, T0 + 60_000);
        expect((await ctx.store.findAccountSession(session.id))?.session.lastSeenAt).toBe(T0 + 60_000);
        expect(await ctx.store.deleteAccountSession(session.id)).toBe(true);
        expect(await ctx.store.findAccountSession(session.id)).toBeNull();
        expect(await ctx.store.deleteAccountSession(session.id)).toBe(false);
      });

      it('refuses a session of an account that does not exist', async () => {
        await expect(ctx.store.createAccountSession(makeSession('acct_missing'))).rejects.toThrow();
      });

      it('ends every session of an account when it is disabled, and finds none while it is', async () => {
        const account = makeAccount();
        await ctx.store.createAccount(account);
        const sessions = [makeSession(account.id), makeSession(account.id)];
        for (const s of sessions) await ctx.store.createAccountSession(s);
        expect(await ctx.store.updateAccount(account.id, { disabledAt: T0 + 1 })).toBe(true);
        for (const s of sessions) expect(await ctx.store.findAccountSession(s.id)).toBeNull();
        // Enabled again, it signs in afresh: the old sessions stay gone.
        await ctx.store.updateAccount(account.id, { disabledAt: null });
        expect((await ctx.store.getAccount(account.id))?.disabledAt).toBeNull();
        for (const s of sessions) expect(await ctx.store.findAccountSession(s.id)).toBeNull();
      });

      it('ends the sessions of a deleted account with it', async () => {
        const account = makeAccount();
        await ctx.store.createAccount(account);
        const session = makeSession(account.id);
        await ctx.store.createAccountSession(session);
        expect(await ctx.store.deleteAccount(account.id)).toBe(true);
        expect(await ctx.store.getAccount(account.id)).toBeNull();
        expect(await ctx.store.findAccountSession(session.id)).toBeNull();
        expect(await ctx.store.deleteAccount(account.id)).toBe(false);
      });

      it('ends the other sessions of an account when its password changes, keeping the one named', async () => {
        const account = makeAccount();
        const other = makeAccount();
        await ctx.store.createAccount(account);
        await ctx.store.createAccount(other);
        const [kept, ended] = [makeSession(account.id), makeSession(account.id)];
        const untouched = makeSession(other.id);
        for (const s of [kept, ended, untouched]) await ctx.store.createAccountSession(s);
        expect(await ctx.store.updateAccount(account.id, { passwordHash: 'scrypt$new', keepSessionId: kept.id })).toBe(true);
        expect((await ctx.store.getAccount(account.id))?.passwordHash).toBe('scrypt$new');
        expect(await ctx.store.findAccountSession(kept.id)).not.toBeNull();
        expect(await ctx.store.findAccountSession(ended.id)).toBeNull();
        expect(await ctx.store.findAccountSession(untouched.id)).not.toBeNull();
        // Without a session to keep (the CLI), every one ends.
        await ctx.store.updateAccount(account.id, { passwordHash: 'scrypt$newer' });
        expect(await ctx.store.findAccountSession(kept.id)).toBeNull();
      });

      it('deletes the sessions idle or old past the given times, and only those', async () => {
        const account = makeAccount();
        await ctx.store.createAccount(account);
        // Long before the other tests' sessions, which a database shared by a file's tests still holds.
        const B = T0 - 10_000_000_000;
        const idle = makeSession(account.id, { createdAt: B, lastSeenAt: B });
        const old = makeSession(account.id, { createdAt: B - 10_000, lastSeenAt: B + 5_000 });
        const live = makeSession(account.id, { createdAt: B, lastSeenAt: B + 5_000 });
        for (const s of [idle, old, live]) await ctx.store.createAccountSession(s);
        expect(await ctx.store.deleteExpiredAccountSessions(B + 1_000, B - 5_000)).toBe(2);
        expect(await ctx.store.findAccountSession(live.id)).not.toBeNull();
        expect(await ctx.store.findAccountSession(idle.id)).toBeNull();
        expect(await ctx.store.findAccountSession(old.id)).toBeNull();
      });
    });

    describe('shared links', () => {
      it('stores a link, finds it by hash while live, lists it, and revokes it in its project only', async () => {
        await ctx.store.createProject(makeProject(ctx.projectId));
        const link = makeLink(ctx.projectId, { name: 'wall screen' });
        await ctx.store.createSharedLink(link);
        expect(await ctx.store.findSharedLink(link.hash)).toEqual(link);
        expect(await ctx.store.findSharedLink('hash-missing')).toBeNull();
        expect(await ctx.store.listSharedLinks(ctx.projectId)).toEqual([link]);
        expect(await ctx.store.revokeSharedLink('p_another', link.id, T0 + 1)).toBe(false);
        expect(await ctx.store.revokeSharedLink(ctx.projectId, link.id, T0 + 1)).toBe(true);
        expect(await ctx.store.revokeSharedLink(ctx.projectId, link.id, T0 + 2)).toBe(false);
        expect(await ctx.store.findSharedLink(link.hash)).toBeNull();
        expect(await ctx.store.listSharedLinks(ctx.projectId)).toEqual([{ ...link, revokedAt: T0 + 1 }]);
      });

      it('refuses a link of a project that does not exist, and a second link with the same hash', async () => {
        await expect(ctx.store.createSharedLink(makeLink('p_missing'))).rejects.toMatchObject({ code: 'UNKNOWN_PROJECT' });
        await ctx.store.createProject(makeProject(ctx.projectId));
        const link = makeLink(ctx.projectId);
        await ctx.store.createSharedLink(link);
        await expect(ctx.store.createSharedLink(makeLink(ctx.projectId, { hash: link.hash }))).rejects.toMatchObject({ code: 'DUPLICATE' });
      });
    });
  });
}
