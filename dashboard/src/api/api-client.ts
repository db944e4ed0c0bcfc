/**
 * The dashboard's one way to the server: requests under the API's base path, authenticated as the
 * credentials say (a read key in headers, `Authorization: ApiKey …` with `X-Project-ID`; a shared
 * link's token, `Authorization: SharedLink …`; or a signed-in account's session cookie with
 * `X-Project-ID`), answers as JSON, and failures as {@link ApiError}.
 */
import { ApiError } from './api-error.js';
import type { Credentials } from './credentials.js';

/** Query parameters; arrays repeat the name (`step=a&step=b`), undefined ones are left out. */
export type Params = Record<string, string | number | readonly string[] | undefined>;

/** A client of one project's API. */
export interface ApiClient {
  /** GETs `/api/v1/<path>` and answers its JSON body as `T`. */
  get<T>(path: string, params?: Params, signal?: AbortSignal): Promise<T>;
  /** Sends a change (`POST` or `DELETE`) with an optional JSON body and answers its JSON body as `T`. */
  send<T>(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** GETs `/api/v1/<path>` and answers the body as a Blob (the export). */
  download(path: string, params?: Params): Promise<Blob>;
}

/** Options of {@link createApiClient}. */
export interface ApiClientOptions {
  credentials: Credentials;
  /** The API's base path, '' or `/stats` (`lib/api-base.ts`). */
  basePath: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Told of every 401: the key was revoked, the session ended, or the link was revoked. */
  onUnauthorized?: () => void;
}

/** The query string of `params`, with a leading `?` when not empty. */
export function queryString(params: Params | undefined): string {
  if (params === undefined) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (typeof value === 'string' || typeof value === 'number') search.append(name, String(value));
    else for (const item of value) search.append(name, item);
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The headers and cookie mode of the credentials: a session cookie goes only with an account's requests. */
function authOf(credentials: Credentials): { headers: Record<string, string>; cookies: RequestCredentials } {
  if (credentials.kind === 'account') return { headers: { 'X-Project-ID': credentials.projectId }, cookies: 'same-origin' };
  if (credentials.kind === 'link') return { headers: { Authorization: `SharedLink ${credentials.token}` }, cookies: 'omit' };
  return { headers: { Authorization: `ApiKey ${credentials.readKey}`, 'X-Project-ID': credentials.projectId }, cookies: 'omit' };
}

/**
 * How often a GET answered `503` with `Retry-After` is asked again, and the longest wait honoured.
 * A report past the server's read budget is such an answer. When it says `continues` (SQLite) the
 * read goes on and the same request asked again gets its answer, so it is asked up to three times;
 * otherwise (PostgreSQL cancels the read) once, since each retry spends the whole budget again
 * (docs/protocol.md, "Errors and limits of the reports").
 */
const BUSY_RETRIES = 3;
const MAX_RETRY_AFTER_S = 30;

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason);
    const done = (): void => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** The seconds of a `Retry-After` of seconds, when the answer has one (a date is not waited for). */
function retryAfterSeconds(response: Response): number | null {
  const value = response.headers.get('Retry-After')?.trim() ?? '';
  return /^\d+$/.test(value) ? Math.min(Number(value), MAX_RETRY_AFTER_S) : null;
}

/** How many times a GET answered `response` may have been asked again and still be asked once more. */
async function retriesAllowed(response: Response): Promise<number> {
  const body = (await response.clone().json().catch(() => null)) as { continues?: unknown } | null;
  return body?.continues === true ? BUSY_RETRIES : 1;
}

/** Creates the client. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const auth = authOf(options.credentials);

  async function request(method: string, path: string, params: Params | undefined, body: unknown, accept: string, signal?: AbortSignal): Promise<Response> {
    for (let retries = 0; ; retries++) {
      const response = await requestOnce(method, path, params, body, accept, signal);
      const seconds = method === 'GET' && response.status === 503 ? retryAfterSeconds(response) : null;
      if (seconds === null || retries >= (await retriesAllowed(response))) return answerOf(response);
      await response.body?.cancel().catch(() => undefined);
      await wait(seconds * 1000, signal);
    }
  }

  async function requestOnce(method: string, path: string, params: Params | undefined, body: unknown, accept: string, signal?: AbortSignal): Promise<Response> {
    const url = `${options.basePath}/api/v1/${path}${queryString(params)}`;
    try {
      return await doFetch(url, {
        method,
        headers: { ...auth.headers, Accept: accept, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        cache: 'no-store',
        credentials: auth.cookies,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      throw new ApiError('The server could not be reached.', 0, null);
    }
  }

  /** The response when it is a success, else its error as an {@link ApiError}. */
  async function answerOf(response: Response): Promise<Response> {
    if (!response.ok) {
      const b = (await response.json().catch(() => null)) as { error?: unknown; code?: unknown } | null;
      if (response.status === 401) options.onUnauthorized?.();
      throw new ApiError(typeof b?.error === 'string' ? b.error : `HTTP ${response.status}`, response.status, typeof b?.code === 'string' ? b.code : null);
    }
    return response;
  }

  return {
    async get<T>(path: string, params?: Params, signal?: AbortSignal): Promise<T> {
      const response = await request('GET', path, params, undefined, 'application/json', signal);
      return (await response.json().catch(() => null)) as T;
    },
    async send<T>(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
      const response = await request(method, path, undefined, body, 'application/json');
      return (await response.json().catch(() => null)) as T;
    },
    async download(path: string, params?: Params): Promise<Blob> {
      return (await request('GET', path, params, undefined, 'application/x-ndjson')).blob();
    },
  };
}
