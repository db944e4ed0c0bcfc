import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { ClickHouseError } from '@clickhouse/client';

/*
 * The CLI's side of `--clickhouse-url` (docs/deploy.md, "ClickHouse"): the address checked before
 * anything opens, shown without its password, and asked whether ClickHouse answers there before
 * the store opens, so that a wrong address fails the command in seconds with a sentence that names
 * ClickHouse rather than a bare `ECONNREFUSED` that could be the configuration database's.
 */

/** How long the check before opening waits for an answer, ms. */
export const CLICKHOUSE_PING_TIMEOUT_MS = 10_000;

/**
 * `url` as the CLI may print it: the password replaced by `***` (the address sits in logs and in
 * terminals; the user name helps and stays).
 */
export function shownClickHouseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an address that is not a URL)';
  }
}

/**
 * Checks the form of a `--clickhouse-url` value: an `http:` or `https:` URL (the official client's
 * transport is HTTP; the native protocol's port 9000 is not it). The database in its path is
 * checked by the store when it opens.
 * @throws Error saying what form is expected, never repeating the password
 */
export function checkClickHouseUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error('must be a URL like http://user:password@127.0.0.1:8123/service_analytics.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`must be an http:// or https:// URL (ClickHouse's HTTP interface, port 8123 by default), not ${parsed.protocol}//…`);
  }
  return raw;
}

/** A plain GET of `target`: its status and body, or a rejection after `timeoutMs` without an answer. */
function get(target: URL, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsGet : httpGet)(target, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.setTimeout(timeoutMs, () => request.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'TIMEOUT' })));
    request.on('error', reject);
  });
}

/**
 * Resolves when the server at `url` answers ClickHouse's `GET /ping` (`Ok.`), which needs no
 * user. Why before opening the store: the store's requests may take minutes (its mutations), so
 * an address where nothing answers would hold the start that long; and nothing is open yet to
 * close when this fails. `node:http`, as the official client uses, not fetch: fetch refuses some
 * ports (its "bad ports") that ClickHouse may listen on.
 * @throws Error naming ClickHouse, the address (password hidden) and what to check
 */
export async function pingClickHouse(url: string, timeoutMs = CLICKHOUSE_PING_TIMEOUT_MS): Promise<void> {
  const target = new URL('/ping', url);
  // /ping needs no user: the password stays out of this request.
  target.username = '';
  target.password = '';
  const shown = shownClickHouseUrl(url);
  let answer: { status: number; body: string };
  try {
    answer = await get(target, timeoutMs);
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const reason = code === 'TIMEOUT' ? message : code || message;
    throw new Error(
      `ClickHouse at ${shown} does not answer (${reason}): check --clickhouse-url (SA_CLICKHOUSE_URL) and that ClickHouse listens there on its HTTP port (8123 by default).`,
      { cause: error },
    );
  }
  if (answer.status !== 200 || answer.body.trim() !== 'Ok.') {
    const said = answer.body.trim().split('\n')[0]?.slice(0, 200) ?? '';
    throw new Error(
      `${shown} is not ClickHouse's HTTP interface: GET /ping answered ${answer.status}${said === '' ? '' : ` "${said}"`} (ClickHouse answers "Ok."; its HTTP port is 8123 by default, 9000 is the native protocol's).`,
    );
  }
}

/**
 * An error of opening the store, worded for the CLI: ClickHouse's own refusals (a wrong password,
 * a missing grant) name ClickHouse and the address; anything else (the configuration database's)
 * is left as it is.
 */
export function clickhouseOpenError(error: unknown, url: string): unknown {
  if (!(error instanceof ClickHouseError)) return error;
  return new Error(`ClickHouse at ${shownClickHouseUrl(url)} refused to open the events' database: ${error.message}`, { cause: error });
}
