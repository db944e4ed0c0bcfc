/**
 * The dashboard's one way to the server: GET requests under the API's base path, authenticated
 * with the read key in headers (`Authorization: ApiKey …`, `X-Project-ID`), answers as JSON, and
 * failures as {@link ApiError}.
 */
import { ApiError } from './api-error.js';
import type { Credentials } from './credentials.js';

/** Query parameters; arrays repeat the name (`step=a&step=b`), undefined ones are left out. */
export type Params = Record<string, string | number | readonly string[] | undefined>;

/** A client of one project's read API. */
export interface ApiClient {
  /** GETs `/api/v1/<path>` and answers its JSON body as `T`. */
  get<T>(path: string, params?: Params, signal?: AbortSignal): Promise<T>;
}

/** Options of {@link createApiClient}. */
export interface ApiClientOptions {
  credentials: Credentials;
  /** The API's base path, '' or `/stats` (`lib/api-base.ts`). */
  basePath: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
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

/** Creates the client. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const { projectId, readKey } = options.credentials;
  return {
    async get<T>(path: string, params?: Params, signal?: AbortSignal): Promise<T> {
      const url = `${options.basePath}/api/v1/${path}${queryString(params)}`;
      let response: Response;
      try {
        response = await doFetch(url, {
          headers: { Authorization: `ApiKey ${readKey}`, 'X-Project-ID': projectId, Accept: 'application/json' },
          cache: 'no-store',
          credentials: 'omit',
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        if (signal?.aborted === true) throw error;
        throw new ApiError('The server could not be reached.', 0, null);
      }
      const body = (await response.json().catch(() => null)) as unknown;
      if (!response.ok) {
        const b = body as { error?: unknown; code?: unknown } | null;
        throw new ApiError(typeof b?.error === 'string' ? b.error : `HTTP ${response.status}`, response.status, typeof b?.code === 'string' ? b.code : null);
      }
      return body as T;
    },
  };
}
