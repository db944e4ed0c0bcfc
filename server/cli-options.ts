/**
 * The CLI's options, in one list for its parser, its `--help` table and the environment-variable
 * table of docs/deploy.md (`environmentTable`, kept equal to that page by a test).
 */

/** Option rows of the help: flag, what it does (lines), its environment variable and default. */
export const OPTION_ROWS: ReadonlyArray<[flag: string, what: readonly string[], env: string]> = [
  ['--db PATH', ['SQLite file'], 'SA_DB (default ./data/analytics.db)'],
  ['--database-url URL', ['postgres://… instead of SQLite'], 'SA_DATABASE_URL or DATABASE_URL'],
  ['--clickhouse-url URL', ['events, recordings, reports in ClickHouse', '(http://user:pw@host:8123/db); projects,', 'keys and salts stay in --db/--database-url'], 'SA_CLICKHOUSE_URL'],
  ['--port N', ['start: port'], 'SA_PORT (default 8787)'],
  ['--host H', ['start: address'], 'SA_HOST (default 127.0.0.1)'],
  ['--trust-proxy [LIST]', ['start: believe X-Forwarded-For from these', 'proxies (addresses, CIDR ranges; bare:', 'loopback); client = rightmost entry', 'not in the list'], 'SA_TRUST_PROXY (e.g. 127.0.0.1,10.0.0.0/8)'],
  ['--read-budget-ms N', ['start: reads past N ms answer 503 with', 'Retry-After (reports, read API, export;', 'PostgreSQL: each read statement)'], 'SA_READ_BUDGET_MS (default 15000)'],
  ['--durability full|relaxed', ['start: SQLite fsyncs each group commit', '(full), or only at checkpoints (relaxed:', 'a power cut may lose acknowledged events)'], 'SA_DURABILITY (default full)'],
  ['--no-migration-backup', ['start: migrate an older SQLite database', 'without copying it first'], 'SA_NO_MIGRATION_BACKUP=1'],
  ['--no-keep-filters-ahead', ["start: keep no frequent filter's top lists", 'ahead in the background (its first view', 'of a day then reads the events)'], 'SA_NO_KEEP_FILTERS_AHEAD=1'],
  ['--cors-origin O', ['start: allowed origin, repeatable'], 'SA_CORS_ORIGIN (comma list; default *)'],
  ['--base-path P', ['start: serve the API under P (/stats:', '/stats/api/v1/…); /healthz, /readyz,', '/metrics stay at the root'], 'SA_BASE_PATH (default none)'],
  ['--retention-days N', ['start: prune older data hourly'], 'SA_RETENTION_DAYS'],
  ['--rate-limit-project R[:B]', ['start: R requests/s per project and', 'key kind, bursts of B (default 2R);', 'off disables it'], 'SA_RATE_LIMIT_PROJECT (default 1000:2000)'],
  ['--rate-limit-ip R[:B]', ['start: R requests/s per client address', '(IPv6: per /64), bursts of B; off', 'disables it'], 'SA_RATE_LIMIT_IP (default 200:400)'],
  ['--no-rate-limit', ['start: no rate limiting at all'], 'SA_NO_RATE_LIMIT=1'],
  ['--serve-example DIR', ['start: serve a built app (dist/example)', 'at /, SPA fallback to its index.html'], 'SA_SERVE_EXAMPLE'],
  ['--connect-src URL', ['start: another origin the served apps may', 'call (an example app built with', 'VITE_SA_ENDPOINT), repeatable'], 'SA_CONNECT_SRC (comma list)'],
  ['--dashboard DIR|off', ['start: the built dashboard, served at', '<base path>/dashboard/; / redirects there', 'when no example app is served'], 'SA_DASHBOARD (default dashboard/ beside cli.js)'],
  ['--demo', ['start: make (once) and use a demo project;', 'GET /demo/config.json gives its keys', 'to loopback clients only'], 'SA_DEMO=1'],
  ['--demo-file PATH', ["start: the demo keys' file (0600)"], 'SA_DEMO_FILE (default demo-project.json beside the SQLite file, else ./data/)'],
  ['--bots drop|flag|keep', ['project create/set: bot events are', 'stored flagged (left out of reports),', 'dropped (the answer counts them), or kept'], '(default flag)'],
  ['--email E, --role R', ['user: the account\'s email; its role,', 'viewer (reports, replays) or admin', '(also erase, export, shared links)'], ''],
  ['--password-stdin', ['user create/password: read the password', 'from standard input'], ''],
  ['--link-id ID', ['link revoke: the link'], ''],
  ['--from T, --to T', ['export: time range, ISO 8601 or ms', '(from inclusive, to exclusive)'], ''],
  ['--out FILE', ['export: write there (default stdout)'], ''],
  ['--to FILE, --from FILE', ['backup: the new copy; restore: the backup', '(export: the time range, above)'], ''],
  ['--force', ['restore: even though the database has', 'a WAL file (a server may have it open)'], ''],
  ['--log-level L', ['debug|info|warn|error'], 'SA_LOG_LEVEL (default info)'],
  ['--json', ['print machine-readable output'], ''],
  ['-h, --help', ['print this help'], ''],
  ['--version', ['print the version'], ''],
];

/** The options `parseArgs` reads, each with the environment variable it also reads. */
export const OPTIONS = {
  db: { type: 'string', env: 'SA_DB' },
  'database-url': { type: 'string', env: 'SA_DATABASE_URL' },
  'clickhouse-url': { type: 'string', env: 'SA_CLICKHOUSE_URL' },
  port: { type: 'string', env: 'SA_PORT' },
  host: { type: 'string', env: 'SA_HOST' },
  'trust-proxy': { type: 'string', env: 'SA_TRUST_PROXY' },
  durability: { type: 'string', env: 'SA_DURABILITY' },
  'no-migration-backup': { type: 'boolean', env: 'SA_NO_MIGRATION_BACKUP' },
  'no-keep-filters-ahead': { type: 'boolean', env: 'SA_NO_KEEP_FILTERS_AHEAD' },
  'read-budget-ms': { type: 'string', env: 'SA_READ_BUDGET_MS' },
  'cors-origin': { type: 'string', multiple: true, env: 'SA_CORS_ORIGIN' },
  'base-path': { type: 'string', env: 'SA_BASE_PATH' },
  'retention-days': { type: 'string', env: 'SA_RETENTION_DAYS' },
  'rate-limit-project': { type: 'string', env: 'SA_RATE_LIMIT_PROJECT' },
  'rate-limit-ip': { type: 'string', env: 'SA_RATE_LIMIT_IP' },
  'no-rate-limit': { type: 'boolean', env: 'SA_NO_RATE_LIMIT' },
  'serve-example': { type: 'string', env: 'SA_SERVE_EXAMPLE' },
  dashboard: { type: 'string', env: 'SA_DASHBOARD' },
  'connect-src': { type: 'string', multiple: true, env: 'SA_CONNECT_SRC' },
  demo: { type: 'boolean', env: 'SA_DEMO' },
  'demo-file': { type: 'string', env: 'SA_DEMO_FILE' },
  'log-level': { type: 'string', env: 'SA_LOG_LEVEL' },
  name: { type: 'string', env: 'SA_PROJECT_NAME' },
  project: { type: 'string', env: 'SA_PROJECT_ID' },
  kind: { type: 'string' },
  'key-id': { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  'link-id': { type: 'string' },
  'full-ip': { type: 'boolean' },
  bots: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  force: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/**
 * The options that have an environment variable, as a Markdown table: variable (and default), flag,
 * what it does. docs/deploy.md holds it between `<!-- options:start -->` and `<!-- options:end -->`;
 * `node scripts/run-ts.mjs scripts/write-options-table.ts` writes it there.
 */
export function environmentTable(): string {
  const lines = ['| Environment variable | Flag | What it does |', '|---|---|---|'];
  for (const [flag, what, env] of OPTION_ROWS) {
    if (!/\bSA_[A-Z_]+/.test(env)) continue;
    const cell = (text: string) => text.replace(/\|/g, '\\|');
    lines.push(`| \`${cell(env.replace(/ \(/, '\` (').replace(/^([^`]*)$/, '$1\`'))} | \`${cell(flag)}\` | ${cell(what.join(' '))} |`);
  }
  return lines.join('\n');
}
