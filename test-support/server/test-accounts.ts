import { randomBytes } from 'node:crypto';
import { hashPassword } from '../../server/auth/password-hash.js';
import type { Account, AccountRole } from '../../server/store/account-store.js';
import type { EventStore } from '../../server/store/event-store.js';

/**
 * scrypt parameters for the tests' own accounts: the hash format keeps them with the hash, so the
 * server checks these passwords with them, and a test does not pay the default cost for each account.
 * Hashes the server makes itself (a password change) use the defaults.
 */
export const TEST_SCRYPT = { N: 1024, r: 8, p: 1 } as const;

/** An account made directly in the store, with its password in clear for the test. */
export interface TestAccount {
  account: Account;
  password: string;
}

/** Creates an account of `role` with a fresh email and password. */
export async function createTestAccount(store: EventStore, role: AccountRole, email?: string): Promise<TestAccount> {
  const id = randomBytes(6).toString('hex');
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const account: Account = {
    id: `acct_${id}`,
    email: email ?? `${role}-${id}@example.com`,
    role,
    passwordHash: await hashPassword(password, TEST_SCRYPT),
    createdAt: Date.now(),
    disabledAt: null,
  };
  await store.createAccount(account);
  return { account, password };
}
