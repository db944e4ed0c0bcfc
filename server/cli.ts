#!/usr/bin/env node
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateKey } from './api-keys.js';
import { runLinkCommand, runUserCommand } from './cli-accounts.js';
import { checkClickHouseUrl, clickhouseOpenError, pingClickHouse } from './cli-clickhouse.js';
import { OPTIONS, OPTION_ROWS } from './cli-options.js';
import { normalizeBasePath } from './app.js';
import { ensureDemoProject } from './demo-project.js';
import { openEventExport } from './export.js';
import { randomId } from './ids.js';
import { type LogLevel, createJsonLogger } from './logger.js';
import { DEFAULT_RATE_LIMITS, type RateLimit } from './middleware/rate-limit.js';
import { pruneOlderThanDays } from './retention.js';
import { serve } from './serve.js';
import { browserUrl, contentSecurityPolicy } from './static-files.js';
import { BOT_POLICIES, type BotPolicy, DEFAULT_BOT_POLICY, type EventStore, type KeyKind } from './store/event-store.js';
import { DEFAULT_DURABILITY, type Durability } from './store/durability.js';
import { type OpenStoreOptions, isPostgresUrl, openStore } from './store/open-store.js';
import { backupSqliteDatabase, restoreSqliteDatabase } from './store/sqlite/sqlite-backup.js';
import { LOOPBACK_PROXIES, parseTrustedProxies } from './trusted-proxies.js';
import { cleanText } from './store/shared/sanitize.js';
import { SERVER_VERSION } from './version.js';

/**
 * The dashboard's directory: `--dashboard DIR`, none for `off`, else the build beside this file
 * (`dist/dashboard` in the package) when it is there.
 * @throws UsageError for a DIR without index.html
 */
function dashboardDirOf(flag: string | undefined): string | undefined {
  if (flag === 'off') return undefined;
  if (flag !== undefined) {
    if (!existsSync(join(flag, 'index.html'))) throw new UsageError(`--dashboard ${flag}: no index.html there; build the dashboard first (npm run build:dashboard).`);
    return flag;
  }
  const shipped = fileURLToPath(new URL('./dashboard', import.meta.url));
  return existsSync(join(shipped, 'index.html')) ? shipped : undefined;
}

/** The options as an aligned table: flag, description, environment variable. */
function optionTable(): string {
  const flagWidth = Math.max(...OPTION_ROWS.map(([flag]) => flag.length)) + 2;
  const whatWidth = Math.max(...OPTION_ROWS.flatMap(([, what]) => what.map((line) => line.length))) + 2;
  const lines: string[] = [];
  for (const [flag, what, env] of OPTION_ROWS) {
    what.forEach((line, i) => lines.push(`  ${(i === 0 ? flag : '').padEnd(flagWidth)}${line.padEnd(whatWidth)}${i === 0 ? env : ''}`.trimEnd()));
  }
  return lines.join('\n');
}

const USAGE = `Usage: service-analytics-server <command> [options]

Commands:
  start                      serve the ingestion API until SIGTERM/SIGINT
  project create --name N    create a project with a write key and a read key (shown once)
  project set ID --bots drop|flag|keep   change a project's bot policy
  project list               list projects
  key create --project ID --kind write|read|admin   admin keys erase users and export
  key rotate --project ID --kind write|read|admin   new key; the old ones of that kind stop working
  key revoke --key-id ID     the key stops working at once
  key list --project ID
  prune --retention-days N   delete events and recordings older than N days
  export --project ID        the project's events as NDJSON, oldest first
  backup --to FILE           a consistent copy of the SQLite database, while it serves
  restore --from FILE        put a backup in place (server stopped; the old file is kept)
  delete-user --project ID USER_ID   delete a user's events and recordings
  user create --email E --role viewer|admin [--password-stdin]   a dashboard account
                             (without --password-stdin a password is made and shown once)
  user list                  list accounts
  user password --email E [--password-stdin]   new password; the account's sessions end
  user disable|enable|delete --email E   disable or delete ends its sessions at once
  link create --project ID [--name N]   a read-only shared link to the project's reports
  link list --project ID
  link revoke --project ID --link-id ID   the link stops working at once
  help                       print this help

Options (each also an environment variable):
${optionTable()}
`;

type Values = Record<string, string | boolean | string[] | undefined>;



/** Flags win over environment variables, which win over defaults. */
function withEnv(values: Values, env: NodeJS.ProcessEnv): Values {
  const out: Values = { ...values };
  for (const [name, spec] of Object.entries(OPTIONS)) {
    if (out[name] !== undefined || !('env' in spec)) continue;
    const raw = env[spec.env] ?? (name === 'database-url' ? env.DATABASE_URL : undefined);
    if (raw === undefined || raw === '') continue;
    if (spec.type === 'boolean') out[name] = raw === '1' || raw.toLowerCase() === 'true';
    else if ('multiple' in spec) out[name] = raw.split(',').map((s) => s.trim()).filter(Boolean);
    else out[name] = raw;
  }
  return out;
}

class UsageError extends Error {}

function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

function required(values: Values, name: string): string {
  const v = str(values, name);
  if (!v) throw new UsageError(`--${name} is required.`);
  return v;
}

function positiveInt(values: Values, name: string): number | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer, not "${raw}".`);
  return n;
}

/** `R` or `R:B` requests per second with burst `B` (default 2R), or `off`. */
function rateLimitOf(values: Values, name: string, fallback: RateLimit): RateLimit | false {
  const raw = str(values, name);
  if (raw === undefined) return fallback;
  if (raw.trim().toLowerCase() === 'off') return false;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?::\s*(\d+)\s*)?$/.exec(raw);
  const ratePerSecond = Number(match?.[1]);
  const burst = match?.[2] === undefined ? Math.ceil(2 * ratePerSecond) : Number(match[2]);
  if (!match || !(ratePerSecond > 0) || !(burst >= 1)) {
    throw new UsageError(`--${name} must be RATE or RATE:BURST (requests per second, burst), or off; not "${raw}".`);
  }
  return { ratePerSecond, burst };
}

function botsOf(values: Values): BotPolicy | undefined {
  const bots = str(values, 'bots');
  if (bots === undefined) return undefined;
  if (!(BOT_POLICIES as readonly string[]).includes(bots)) throw new UsageError(`--bots must be ${BOT_POLICIES.join(', ')}; not "${bots}".`);
  return bots as BotPolicy;
}

/** `--from` / `--to`: ISO 8601 or milliseconds since the epoch, as the read API takes them. */
function timeOf(values: Values, name: string): number | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be an ISO 8601 time or milliseconds since the epoch, not "${raw}".`);
  return ms;
}

/** Writes every line to `out`, waiting for `drain` whenever its buffer is full: constant memory. */
async function writeLines(lines: AsyncIterable<string>, out: Writable): Promise<number> {
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!out.write(line)) await once(out, 'drain');
  }
  return n;
}

function kindOf(values: Values): KeyKind {
  const kind = required(values, 'kind');
  if (kind !== 'write' && kind !== 'read' && kind !== 'admin') throw new UsageError('--kind must be write, read or admin.');
  return kind;
}

/** `--durability`: full (the default) or relaxed. */
function durabilityOf(values: Values): Durability {
  const raw = str(values, 'durability') ?? DEFAULT_DURABILITY;
  if (raw !== 'full' && raw !== 'relaxed') throw new UsageError(`--durability must be full or relaxed, not "${raw}".`);
  return raw;
}

/** `--trust-proxy [LIST]` (bare, or SA_TRUST_PROXY=1: a proxy on this machine), checked now. */
function trustProxyOf(values: Values): string | undefined {
  const raw = str(values, 'trust-proxy');
  if (raw === undefined) return undefined;
  // Before it took a list, the setting was a boolean: 0, false and off still mean no proxy.
  if (['0', 'false', 'off', 'no'].includes(raw.trim().toLowerCase())) return undefined;
  const spec = raw === '' || raw === '1' || raw.toLowerCase() === 'true' ? LOOPBACK_PROXIES : raw;
  try {
    parseTrustedProxies(spec);
  } catch (error) {
    throw new UsageError(`--trust-proxy: ${(error as Error).message}`);
  }
  return spec;
}

/**
 * `--trust-proxy` took no value before it took a list: a bare one (last, or before another flag)
 * still means a proxy on this machine.
 */
function withBareTrustProxy(argv: readonly string[]): string[] {
  return argv.map((arg, i) => (arg === '--trust-proxy' && (i === argv.length - 1 || (argv[i + 1] ?? '').startsWith('-')) ? `--trust-proxy=${LOOPBACK_PROXIES}` : arg));
}

/** The SQLite file or PostgreSQL URL: everything, or with `--clickhouse-url` projects, keys and salts. */
function locationOf(values: Values): string {
  return str(values, 'database-url') ?? str(values, 'db') ?? './data/analytics.db';
}

/** `--clickhouse-url`, its form checked now: where the events go, or undefined when they stay in the location. */
function clickhouseUrlOf(values: Values): string | undefined {
  const raw = str(values, 'clickhouse-url');
  if (raw === undefined) return undefined;
  try {
    return checkClickHouseUrl(raw);
  } catch (error) {
    throw new UsageError(`--clickhouse-url ${(error as Error).message}`);
  }
}

/**
 * Opens and initialises the store. With a ClickHouse address, ClickHouse is asked first whether it
 * answers (`cli-clickhouse.ts` says why), and its refusals at the opening are worded to name it. A
 * store whose opening failed is closed before the error goes on, so that none of its threads or
 * sockets keeps the process from exiting.
 */
async function openInitialisedStore(location: string, options: OpenStoreOptions): Promise<EventStore> {
  const url = options.clickhouseUrl;
  if (url !== undefined) await pingClickHouse(url);
  const store = openStore(location, options);
  try {
    await store.init();
    return store;
  } catch (error) {
    // The opening's error is the one to report; a failure to close what half opened adds nothing.
    await store.close().catch(() => undefined);
    throw url === undefined ? error : clickhouseOpenError(error, url);
  }
}

/**
 * Runs a command on the store. `config` commands (projects, keys) open only the location, whatever
 * `--clickhouse-url` says: projects and keys live there, so they need no ClickHouse to answer.
 */
async function withStore<T>(values: Values, run: (store: EventStore) => Promise<T>, scope: 'events' | 'config' = 'events'): Promise<T> {
  const clickhouseUrl = scope === 'events' ? clickhouseUrlOf(values) : undefined;
  const store = await openInitialisedStore(locationOf(values), {
    ...(clickhouseUrl === undefined ? {} : { clickhouseUrl }),
    migrationBackup: values['no-migration-backup'] !== true,
    onMigrationBackup: (copy, fromVersion) => void process.stderr.write(`Copied the database to ${copy} before migrating it from schema version ${fromVersion}.\n`),
    onAggregatesBuild: (phase, ms, source) =>
      void process.stderr.write(
        phase === 'built'
          ? `Report aggregates built in ${(ms / 1000).toFixed(1)} s.\n`
          : source === 'events'
            ? 'Building the report aggregates from the events (about 15 s per million on SQLite)…\n'
            : 'Completing the report aggregates from their own rows (seconds)…\n',
      ),
  });
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

async function requireProject(store: EventStore, projectId: string): Promise<void> {
  if (!(await store.getProject(projectId))) throw new UsageError(`No project ${projectId}.`);
}

/** parseArgs's errors, reworded to name the flag in this CLI's words. */
function parseArgv(argv: string[]): ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args: withBareTrustProxy(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : String(error);
    const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`Unknown option ${flag}.`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new UsageError(/argument missing/.test(message) ? `${flag.replace(/^-[a-z], /, '')} needs a value.` : `${flag} takes no value.`);
    }
    throw new UsageError(message);
  }
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const parsed = parseArgv(argv);
  const values = withEnv(parsed.values as Values, env);
  const [command, sub] = parsed.positionals;
  const json = values.json === true;
  const print = (line: string): void => void process.stdout.write(`${line}\n`);

  if (values.version === true) {
    print(SERVER_VERSION);
    return 0;
  }
  if (values.help === true || command === undefined || command === 'help') {
    print(USAGE);
    return 0;
  }

  if (command === 'start') {
    const logger = createJsonLogger((str(values, 'log-level') ?? 'info') as LogLevel);
    const location = locationOf(values);
    // Every setting is checked before the store opens: a wrong one then leaves nothing to close.
    const clickhouseUrl = clickhouseUrlOf(values);
    const trustProxy = trustProxyOf(values);
    const readBudgetMs = positiveInt(values, 'read-budget-ms');
    if (readBudgetMs === 0) throw new UsageError('--read-budget-ms must be at least 1.');
    const durability = durabilityOf(values);
    const retentionDays = positiveInt(values, 'retention-days');
    let basePath: string;
    try {
      basePath = normalizeBasePath(str(values, 'base-path'));
    } catch (error) {
      throw new UsageError(`--base-path: ${(error as Error).message}`);
    }
    const exampleDir = str(values, 'serve-example');
    if (exampleDir !== undefined && !existsSync(join(exampleDir, 'index.html'))) {
      throw new UsageError(`--serve-example ${exampleDir}: no index.html there; build the example app first (npm run build:example).`);
    }
    const dashboardDir = dashboardDirOf(str(values, 'dashboard'));
    const connectSources = Array.isArray(values['connect-src']) ? values['connect-src'] : [];
    try {
      contentSecurityPolicy(connectSources);
    } catch (error) {
      throw new UsageError(`--connect-src: ${(error as Error).message}`);
    }
    const demoFile = str(values, 'demo-file') ?? (str(values, 'database-url') ? './data/demo-project.json' : join(dirname(location), 'demo-project.json'));
    const corsOrigins = values['cors-origin'];
    const rateLimit =
      values['no-rate-limit'] === true
        ? false
        : {
            project: rateLimitOf(values, 'rate-limit-project', DEFAULT_RATE_LIMITS.project),
            ip: rateLimitOf(values, 'rate-limit-ip', DEFAULT_RATE_LIMITS.ip),
          };
    const port = positiveInt(values, 'port') ?? 8787;
    const store = await openInitialisedStore(location, {
      ...(clickhouseUrl === undefined ? {} : { clickhouseUrl }),
      durability,
      ...(readBudgetMs === undefined ? {} : { readBudgetMs }),
      keepFiltersAhead: values['no-keep-filters-ahead'] !== true,
      migrationBackup: values['no-migration-backup'] !== true,
      onMigrationBackup: (copy, fromVersion) => logger.info('database copied before its migration', { copy, fromVersion }),
      // Minutes for millions of events, before the server listens: said, so that nobody restarts it meanwhile.
      onAggregatesBuild: (phase, ms, source) =>
        phase === 'building'
          ? logger.info(`building the report aggregates from ${source === 'events' ? 'the events' : 'their own rows'}; the server listens once they are built`)
          : logger.info('report aggregates built', { seconds: Math.round(ms / 100) / 10 }),
    });
    let demo: Awaited<ReturnType<typeof ensureDemoProject>> | undefined;
    let running: Awaited<ReturnType<typeof serve>>;
    try {
      demo = values.demo === true ? await ensureDemoProject(store, { file: demoFile }) : undefined;
      running = await serve({
        store,
        logger,
        port,
        host: str(values, 'host') ?? '127.0.0.1',
        ...(trustProxy === undefined ? {} : { trustProxy }),
        corsOrigins: Array.isArray(corsOrigins) && corsOrigins.length > 0 ? corsOrigins : ['*'],
        rateLimit,
        basePath,
        ...(retentionDays === undefined ? {} : { retentionDays }),
        ...(exampleDir === undefined ? {} : { staticFiles: { root: exampleDir, connectSources } }),
        ...(dashboardDir === undefined ? {} : { dashboard: { root: dashboardDir } }),
        ...(demo === undefined ? {} : { demo: demo.demo }),
      });
    } catch (error) {
      // A port in use, demo mode refused: neither the store's threads nor ClickHouse's sockets may
      // keep the process alive after the error is printed.
      await store.close().catch(() => undefined);
      throw error;
    }
    if (demo !== undefined) logger.info(demo.created ? 'demo project created' : 'demo project reused', { projectId: demo.demo.projectId, keys: demoFile });
    // Last: whoever waits for this line (scripts, tests) then has every line of the start before it.
    // With ClickHouse, also where projects and keys live: the store kind alone would not say.
    const configStore = clickhouseUrl === undefined ? {} : { configStore: isPostgresUrl(location) ? 'postgres' : 'sqlite' };
    // On PostgreSQL, whether the hll extension merges the reports' sketches (docs/deploy.md).
    const sketchMerge = 'sketchMerge' in store ? { sketchMerge: String(store.sketchMerge) } : {};
    logger.info('listening', { address: running.url, store: store.kind, ...configStore, ...sketchMerge, ...(basePath === '' ? {} : { basePath }) });
    await new Promise<void>((resolve) => {
      const stop = (signal: string): void => {
        logger.info('shutting down', { signal });
        running.close().then(resolve, (error: unknown) => {
          logger.error('shutdown failed', { error: String(error) });
          resolve();
        });
      };
      // `on`, not `once`: a second signal (Ctrl-C reaches both `npm start` and this process, which
      // it also passes on) must not meet Node's default handler, which would exit mid-shutdown.
      let stopping = false;
      const once = (signal: string) => () => {
        if (stopping) return;
        stopping = true;
        stop(signal);
      };
      process.on('SIGTERM', once('SIGTERM'));
      process.on('SIGINT', once('SIGINT'));
      // After the handlers: whoever reads this line may stop the server at once.
      if (dashboardDir !== undefined) {
        print(`Dashboard: open ${browserUrl(running.url)}${basePath}/dashboard/${demo === undefined ? '' : '  (demo project ' + demo.demo.projectId + ', read key in ' + demoFile + ')'}`);
      }
      if (exampleDir !== undefined) print(`Example app: open ${browserUrl(running.url)}/${demo === undefined ? '' : '  (demo project ' + demo.demo.projectId + ')'}`);
    });
    logger.info('stopped');
    return 0;
  }

  if (command === 'project' && sub === 'create') {
    const name = required(values, 'name');
    const bots = botsOf(values) ?? DEFAULT_BOT_POLICY;
    return withStore(values, async (store) => {
      const now = Date.now();
      const projectId = randomId('proj_', 16);
      await store.createProject({ id: projectId, name, createdAt: now, fullIp: values['full-ip'] === true, corsOrigins: [], bots });
      const write = generateKey(projectId, 'write', now);
      const read = generateKey(projectId, 'read', now);
      await store.createKey(write.record);
      await store.createKey(read.record);
      // writeKey and readKey as the README names them; apiKey (the write key) for scripts written before.
      if (json) print(JSON.stringify({ projectId, writeKey: write.key, readKey: read.key, apiKey: write.key }));
      else {
        print(
          `Project ${name}\n  project id: ${projectId}\n  write key:  ${write.key}\n  read key:   ${read.key}\n` +
            'The keys are shown once; only their hashes are stored. The read key reads reports and events;\n' +
            `erasure and export over HTTP take an admin key: key create --project ${projectId} --kind admin`,
        );
      }
      return 0;
    }, 'config');
  }

  if (command === 'project' && sub === 'set') {
    const projectId = parsed.positionals[2];
    if (projectId === undefined) throw new UsageError('project set needs the project id: project set ID --bots drop|flag|keep.');
    const bots = botsOf(values);
    if (bots === undefined) throw new UsageError('project set needs a setting to change: --bots drop|flag|keep.');
    return withStore(values, async (store) => {
      if (!(await store.updateProject(projectId, { bots }))) throw new UsageError(`No project ${projectId}.`);
      print(json ? JSON.stringify({ projectId, bots }) : `Project ${projectId}: bots ${bots}.`);
      return 0;
    }, 'config');
  }

  if (command === 'project' && sub === 'list') {
    return withStore(values, async (store) => {
      const projects = await store.listProjects();
      if (json) print(JSON.stringify(projects));
      else for (const p of projects) print(`${p.id}\t${p.name}\t${new Date(p.createdAt).toISOString()}\tbots ${p.bots}`);
      return 0;
    }, 'config');
  }

  if (command === 'key' && (sub === 'create' || sub === 'rotate')) {
    const projectId = required(values, 'project');
    const kind = kindOf(values);
    return withStore(values, async (store) => {
      await requireProject(store, projectId);
      const now = Date.now();
      const previous = sub === 'rotate' ? (await store.listKeys(projectId)).filter((k) => k.kind === kind && k.revokedAt === null) : [];
      const created = generateKey(projectId, kind, now);
      await store.createKey(created.record);
      for (const old of previous) await store.revokeKey(old.id, now);
      if (json) print(JSON.stringify({ projectId, keyId: created.record.id, kind, key: created.key, revoked: previous.map((k) => k.id) }));
      else {
        print(`New ${kind} key ${created.record.id}: ${created.key}${previous.length ? `\nRevoked: ${previous.map((k) => k.id).join(', ')}` : ''}`);
        if (kind === 'read') print('A read key reads reports and events; erasure and export over HTTP take an admin key (--kind admin).');
      }
      return 0;
    }, 'config');
  }

  if (command === 'key' && sub === 'revoke') {
    const keyId = required(values, 'key-id');
    return withStore(values, async (store) => {
      const revoked = await store.revokeKey(keyId, Date.now());
      if (!revoked) throw new UsageError(`No live key ${keyId}.`);
      print(json ? JSON.stringify({ keyId, revoked: true }) : `Revoked ${keyId}.`);
      return 0;
    }, 'config');
  }

  if (command === 'key' && sub === 'list') {
    const projectId = required(values, 'project');
    return withStore(values, async (store) => {
      const keys = await store.listKeys(projectId);
      const rows = keys.map(({ id, kind, prefix, createdAt, revokedAt }) => ({ id, kind, prefix, createdAt, revokedAt }));
      if (json) print(JSON.stringify(rows));
      else for (const k of rows) print(`${k.id}\t${k.kind}\t${k.prefix}…\t${k.revokedAt === null ? 'live' : 'revoked'}`);
      return 0;
    }, 'config');
  }

  if (command === 'user' || command === 'link') {
    const context = (store: EventStore) => ({
      store,
      print,
      json,
      usage: (message: string) => new UsageError(message),
      readStdin: async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).toString('utf8');
      },
    });
    return withStore(
      values,
      (store) =>
        command === 'user'
          ? runUserCommand(context(store), sub, { email: str(values, 'email'), role: str(values, 'role'), passwordStdin: values['password-stdin'] === true })
          : runLinkCommand(context(store), sub, { project: str(values, 'project'), name: str(values, 'name'), linkId: str(values, 'link-id') }),
      'config',
    );
  }

  if (command === 'prune') {
    const days = positiveInt(values, 'retention-days');
    if (days === undefined) throw new UsageError('--retention-days is required.');
    return withStore(values, async (store) => {
      const n = await pruneOlderThanDays(store, days, Date.now());
      const cutoff = new Date(n.cutoff).toISOString();
      print(json ? JSON.stringify({ events: n.events, chunks: n.chunks, cutoff }) : `Deleted ${n.events} events and ${n.chunks} recording chunks older than ${days} days (before ${cutoff}).`);
      return 0;
    });
  }

  if (command === 'backup' || command === 'restore') {
    if (str(values, 'clickhouse-url') !== undefined) {
      // A copy of the configuration alone, beside events it does not match, is not a backup.
      throw new UsageError(
        `${command} copies a SQLite database, not ClickHouse, where --clickhouse-url (SA_CLICKHOUSE_URL) puts the events: ` +
          `use ClickHouse's own BACKUP and RESTORE for them (docs/deploy.md, "ClickHouse"), and run ${command} without --clickhouse-url for the SQLite file of projects and keys.`,
      );
    }
    const location = locationOf(values);
    if (isPostgresUrl(location)) {
      throw new UsageError(
        command === 'backup'
          ? `${command} copies a SQLite file; for PostgreSQL use its own tools: pg_dump --format=custom --file FILE "${'$'}SA_DATABASE_URL"`
          : `${command} copies a SQLite file; for PostgreSQL use its own tools: pg_restore --clean --if-exists --dbname "${'$'}SA_DATABASE_URL" FILE`,
      );
    }
    if (command === 'backup') {
      const to = required(values, 'to');
      const done = await backupSqliteDatabase(location, to);
      print(json ? JSON.stringify({ to, ...done }) : `Backed up ${location} to ${to}: ${done.events} events, ${done.pages} pages, one consistent snapshot.`);
      return 0;
    }
    const from = required(values, 'from');
    const done = restoreSqliteDatabase(from, location, { force: values.force === true });
    print(
      json
        ? JSON.stringify({ from, to: location, ...done })
        : `Restored ${from} to ${location}: ${done.events} events.${done.previous === null ? '' : ` The database that was there is kept as ${done.previous}.`}`,
    );
    return 0;
  }

  if (command === 'export') {
    const projectId = required(values, 'project');
    const from = timeOf(values, 'from');
    const to = timeOf(values, 'to');
    if (from !== undefined && to !== undefined && to < from) throw new UsageError('--to must not be before --from.');
    const outFile = str(values, 'out');
    return withStore(values, async (store) => {
      await requireProject(store, projectId);
      const lines = await openEventExport(store, { projectId, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) });
      if (outFile === undefined) {
        await writeLines(lines, process.stdout);
        return 0;
      }
      const out = createWriteStream(outFile, { mode: 0o600 });
      try {
        const n = await writeLines(lines, out);
        await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
        process.stderr.write(`Exported ${n} events to ${outFile}.\n`);
      } finally {
        out.destroy();
      }
      return 0;
    });
  }

  if (command === 'delete-user') {
    const projectId = required(values, 'project');
    const userId = sub;
    if (userId === undefined || userId === '') throw new UsageError('delete-user needs the user id: delete-user --project ID USER_ID.');
    return withStore(values, async (store) => {
      await requireProject(store, projectId);
      // Matched as stored: NUL and lone surrogates were replaced (store/shared/sanitize.ts).
      const deleted = await store.deleteUser(projectId, cleanText(userId));
      print(json ? JSON.stringify({ projectId, userId, ...deleted }) : `Deleted ${deleted.events} events and ${deleted.recordings} recording chunks of user ${userId}.`);
      return 0;
    });
  }

  throw new UsageError(`Unknown command "${[command, sub].filter(Boolean).join(' ')}".`);
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const usage = error instanceof UsageError;
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage ? '\nRun service-analytics-server --help for the commands and options.\n' : ''}`);
    process.exitCode = usage ? 2 : 1;
  },
);
