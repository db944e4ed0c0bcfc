import { hashPassword, passwordProblem } from './auth/password-hash.js';
import { generateSharedLink, sharedLinkPath } from './auth/shared-link-token.js';
import { randomId } from './ids.js';
import { normalizeEmail } from './routes/sign-in.js';
import { ACCOUNT_ROLES, type Account, type AccountRole } from './store/account-store.js';
import type { EventStore } from './store/event-store.js';

/*
 * The CLI's `user …` and `link …` commands (README, "Team access"): the dashboard's accounts and a
 * project's read-only shared links, on the configuration database, with no server running needed.
 */

/** What the commands need from the CLI around them. */
export interface AccountCommandContext {
  store: EventStore;
  print(line: string): void;
  json: boolean;
  /** An error the CLI reports as a usage error (exit code 2). */
  usage(message: string): Error;
  /** The whole of standard input, for `--password-stdin`. */
  readStdin(): Promise<string>;
}

/** The flags of `user …`. */
export interface UserCommandFlags {
  email: string | undefined;
  role: string | undefined;
  passwordStdin: boolean;
}

/** The flags of `link …`. */
export interface LinkCommandFlags {
  project: string | undefined;
  name: string | undefined;
  linkId: string | undefined;
}

const accountRow = (a: Account) => ({ id: a.id, email: a.email, role: a.role, createdAt: a.createdAt, disabledAt: a.disabledAt });

/**
 * The password of `user create` and `user password`: from standard input with `--password-stdin`
 * (its first line; never a flag, which shell history and `ps` would show), else a new random one,
 * printed once.
 */
async function newPassword(c: AccountCommandContext, fromStdin: boolean): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: randomId('', 20), generated: true };
  const password = (await c.readStdin()).split(/\r?\n/)[0] ?? '';
  const problem = passwordProblem(password);
  if (problem !== null) throw c.usage(problem);
  return { password, generated: false };
}

async function accountOf(c: AccountCommandContext, email: string | undefined): Promise<Account> {
  if (email === undefined || email.trim() === '') throw c.usage('--email is required.');
  const account = await c.store.findAccountByEmail(normalizeEmail(email));
  if (account === null) throw c.usage(`No account ${normalizeEmail(email)}.`);
  return account;
}

/** Runs `user create|list|password|disable|enable|delete`. */
export async function runUserCommand(c: AccountCommandContext, sub: string | undefined, flags: UserCommandFlags): Promise<number> {
  const { store, print, json } = c;
  if (sub === 'create') {
    if (flags.email === undefined || !/^[^\s@]+@[^\s@]+$/.test(flags.email.trim())) throw c.usage('user create needs --email ADDRESS.');
    const role = flags.role ?? 'viewer';
    if (!(ACCOUNT_ROLES as readonly string[]).includes(role)) throw c.usage(`--role must be ${ACCOUNT_ROLES.join(' or ')}, not "${role}".`);
    const { password, generated } = await newPassword(c, flags.passwordStdin);
    const account: Account = {
      id: randomId('acct_', 16),
      email: normalizeEmail(flags.email),
      role: role as AccountRole,
      passwordHash: await hashPassword(password),
      createdAt: Date.now(),
      disabledAt: null,
    };
    try {
      await store.createAccount(account);
    } catch (error) {
      if ((error as { code?: string }).code === 'DUPLICATE') throw c.usage(`An account ${account.email} exists already.`);
      throw error;
    }
    if (json) print(JSON.stringify({ ...accountRow(account), ...(generated ? { password } : {}) }));
    else print(`Account ${account.email} (${account.role}) created.${generated ? `\n  password: ${password}\nThe password is shown once; only its hash is stored.` : ''}`);
    return 0;
  }
  if (sub === 'list') {
    const accounts = await store.listAccounts();
    if (json) print(JSON.stringify(accounts.map(accountRow)));
    else for (const a of accounts) print(`${a.id}\t${a.email}\t${a.role}\t${a.disabledAt === null ? 'active' : 'disabled'}`);
    return 0;
  }
  if (sub === 'password') {
    const account = await accountOf(c, flags.email);
    const { password, generated } = await newPassword(c, flags.passwordStdin);
    // Every session of the account ends: whoever knew the old password is signed out.
    await store.updateAccount(account.id, { passwordHash: await hashPassword(password) });
    if (json) print(JSON.stringify({ id: account.id, email: account.email, ...(generated ? { password } : {}) }));
    else print(`New password for ${account.email}${generated ? `: ${password}` : ''}. Its sessions have ended.`);
    return 0;
  }
  if (sub === 'disable' || sub === 'enable') {
    const account = await accountOf(c, flags.email);
    await store.updateAccount(account.id, { disabledAt: sub === 'disable' ? Date.now() : null });
    print(json ? JSON.stringify({ id: account.id, email: account.email, disabled: sub === 'disable' }) : `${account.email} ${sub}d.${sub === 'disable' ? ' Its sessions have ended.' : ''}`);
    return 0;
  }
  if (sub === 'delete') {
    const account = await accountOf(c, flags.email);
    await store.deleteAccount(account.id);
    print(json ? JSON.stringify({ id: account.id, email: account.email, deleted: true }) : `Deleted ${account.email}; its sessions have ended.`);
    return 0;
  }
  throw c.usage(`Unknown command "user ${sub ?? ''}": user create|list|password|disable|enable|delete.`);
}

/** Runs `link create|list|revoke`. */
export async function runLinkCommand(c: AccountCommandContext, sub: string | undefined, flags: LinkCommandFlags): Promise<number> {
  const { store, print, json } = c;
  if (sub === 'create' || sub === 'list') {
    if (flags.project === undefined) throw c.usage('--project is required.');
    const project = await store.getProject(flags.project);
    if (project === null) throw c.usage(`No project ${flags.project}.`);
    if (sub === 'list') {
      const links = await store.listSharedLinks(project.id);
      const rows = links.map(({ id, name, prefix, createdAt, revokedAt }) => ({ id, name, prefix, createdAt, revokedAt }));
      if (json) print(JSON.stringify(rows));
      else for (const l of rows) print(`${l.id}\t${l.prefix}…\t${l.revokedAt === null ? 'live' : 'revoked'}\t${l.name}`);
      return 0;
    }
    const { token, link } = generateSharedLink(project.id, { name: (flags.name ?? '').trim(), createdBy: null, now: Date.now() });
    await store.createSharedLink(link);
    const path = sharedLinkPath('', token);
    if (json) print(JSON.stringify({ projectId: project.id, linkId: link.id, token, path }));
    else print(`Shared link ${link.id} (reports only): open https://YOUR-SERVER${path}\n(under --base-path P: P${path}). The token is shown once; only its hash is stored.`);
    return 0;
  }
  if (sub === 'revoke') {
    if (flags.project === undefined || flags.linkId === undefined) throw c.usage('link revoke needs --project ID --link-id ID.');
    if (!(await store.revokeSharedLink(flags.project, flags.linkId, Date.now()))) throw c.usage(`No live link ${flags.linkId} in project ${flags.project}.`);
    print(json ? JSON.stringify({ linkId: flags.linkId, revoked: true }) : `Revoked ${flags.linkId}.`);
    return 0;
  }
  throw c.usage(`Unknown command "link ${sub ?? ''}": link create|list|revoke.`);
}
