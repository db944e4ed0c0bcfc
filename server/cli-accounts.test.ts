/**
 * The CLI's `user …` and `link …` commands (README, "Team access") on a real SQLite file, called as
 * the CLI calls them: passwords hashed (never stored as given), the role checked, disabling and a
 * new password ending sessions, links made with a token shown once and revoked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from './auth/password-hash.js';
import { hashKey } from './api-keys.js';
import { type AccountCommandContext, runLinkCommand, runUserCommand } from './cli-accounts.js';
import type { EventStore } from './store/event-store.js';
import { createSqliteStore } from './store/sqlite/sqlite-store.js';
import { makeProject, newProjectId } from '../test-support/store/event-store.fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'cli-accounts-'));
let store: EventStore;

beforeAll(async () => {
  store = createSqliteStore({ path: join(dir, 'analytics.db') });
  await store.init();
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A context that collects what the command prints, with `stdin` as standard input. */
function context(stdin = ''): { c: AccountCommandContext; printed: string[] } {
  const printed: string[] = [];
  return {
    printed,
    c: { store, print: (line) => void printed.push(line), json: true, usage: (message) => new Error(`usage: ${message}`), readStdin: async () => stdin },
  };
}

const flags = (email: string | undefined, role?: string, passwordStdin = false) => ({ email, role, passwordStdin });

describe('user commands', () => {
  it('creates an account with a password from stdin, stored as a scrypt hash, the email lower-cased', async () => {
    const { c, printed } = context('a long password\n');
    expect(await runUserCommand(c, 'create', flags('Ana@Example.com', 'admin', true))).toBe(0);
    const row = JSON.parse(printed[0] as string) as { email: string; role: string; password?: string };
    expect([row.email, row.role, row.password]).toEqual(['ana@example.com', 'admin', undefined]);
    const account = await store.findAccountByEmail('ana@example.com');
    expect(account?.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('a long password', account?.passwordHash ?? '')).toBe(true);
  });

  it('makes a password and prints it once when none is given; refuses a bad role, a short password and a second account', async () => {
    const { c, printed } = context();
    await runUserCommand(c, 'create', flags('bo@example.com'));
    const row = JSON.parse(printed[0] as string) as { role: string; password: string };
    expect(row.role).toBe('viewer');
    expect(await verifyPassword(row.password, (await store.findAccountByEmail('bo@example.com'))?.passwordHash ?? '')).toBe(true);
    await expect(runUserCommand(c, 'create', flags('cy@example.com', 'owner'))).rejects.toThrow('usage: --role must be viewer or admin, not "owner".');
    await expect(runUserCommand(context('short').c, 'create', flags('cy@example.com', 'viewer', true))).rejects.toThrow(/at least 10 characters/);
    await expect(runUserCommand(c, 'create', flags('BO@example.com'))).rejects.toThrow('usage: An account bo@example.com exists already.');
  });

  it('lists, disables (ending sessions), sets a new password (ending sessions), enables and deletes', async () => {
    const { c, printed } = context('another long one');
    await runUserCommand(c, 'create', flags('di@example.com', 'viewer', true));
    const account = await store.findAccountByEmail('di@example.com');
    const id = account?.id ?? '';
    await runUserCommand(c, 'list', flags(undefined));
    expect((JSON.parse(printed.at(-1) as string) as Array<{ email: string }>).map((a) => a.email)).toContain('di@example.com');

    await store.createAccountSession({ id: 's-1', accountId: id, createdAt: 1, lastSeenAt: 1 });
    await runUserCommand(c, 'disable', flags('di@example.com'));
    expect(await store.findAccountSession('s-1')).toBeNull();
    await runUserCommand(c, 'enable', flags('di@example.com'));
    await store.createAccountSession({ id: 's-2', accountId: id, createdAt: 1, lastSeenAt: 1 });
    await runUserCommand(context('a brand new password').c, 'password', flags('di@example.com', undefined, true));
    expect(await store.findAccountSession('s-2')).toBeNull();
    expect(await verifyPassword('a brand new password', (await store.getAccount(id))?.passwordHash ?? '')).toBe(true);
    await runUserCommand(c, 'delete', flags('di@example.com'));
    expect(await store.getAccount(id)).toBeNull();
    await expect(runUserCommand(c, 'delete', flags('di@example.com'))).rejects.toThrow('usage: No account di@example.com.');
  });
});

describe('link commands', () => {
  it('makes a link of a project (its token printed once, its hash stored), lists it and revokes it', async () => {
    const project = makeProject(newProjectId());
    await store.createProject(project);
    const { c, printed } = context();
    await runLinkCommand(c, 'create', { project: project.id, name: 'board', linkId: undefined });
    const made = JSON.parse(printed[0] as string) as { linkId: string; token: string; path: string };
    expect(made.path).toBe(`/dashboard/#/shared/${made.token}`);
    expect((await store.findSharedLink(hashKey(made.token)))?.id).toBe(made.linkId);
    await runLinkCommand(c, 'list', { project: project.id, name: undefined, linkId: undefined });
    expect(JSON.parse(printed[1] as string)).toMatchObject([{ id: made.linkId, name: 'board', revokedAt: null }]);
    await runLinkCommand(c, 'revoke', { project: project.id, name: undefined, linkId: made.linkId });
    expect(await store.findSharedLink(hashKey(made.token))).toBeNull();
    await expect(runLinkCommand(c, 'revoke', { project: project.id, name: undefined, linkId: made.linkId })).rejects.toThrow(/No live link/);
    await expect(runLinkCommand(c, 'create', { project: 'proj_missing', name: undefined, linkId: undefined })).rejects.toThrow('usage: No project proj_missing.');
  });
});
