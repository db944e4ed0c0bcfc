/**
 * Where the example app gets its project and keys: `VITE_SA_*` variables at build time, else the
 * demo project that `npm start` (`start --demo`) hands to loopback clients at `/demo/config.json`.
 */
import type { AnalyticsConfig } from 'service-analytics';
import { CTA_EXPERIMENT } from './experiments.js';

/** The project the app reports to. */
export interface ExampleConfig {
  projectId: string;
  /** Public write key. */
  apiKey: string;
  /** Read key for the Events and Replay pages; null when none was given. */
  readKey: string | null;
  /** Server address; undefined means the page's own origin. */
  endpoint: string | undefined;
}

/** Why the app could not start, as a sentence that names the fix. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads the configuration: the build-time variables when set, else `GET /demo/config.json`.
 * @throws ConfigError when neither is available
 */
export async function loadExampleConfig(fetchImpl: typeof fetch = (input, init) => fetch(input, init)): Promise<ExampleConfig> {
  const env = import.meta.env;
  const endpoint = env.VITE_SA_ENDPOINT || undefined;
  if (env.VITE_SA_PROJECT_ID && env.VITE_SA_API_KEY) {
    return { projectId: env.VITE_SA_PROJECT_ID, apiKey: env.VITE_SA_API_KEY, readKey: env.VITE_SA_READ_KEY || null, endpoint };
  }
  let response: Response;
  try {
    response = await fetchImpl(`${endpoint ?? ''}/demo/config.json`, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  } catch (error) {
    throw new ConfigError(`The analytics server did not answer (${String(error)}). Start it with \`npm start\`.`);
  }
  if (!response.ok) {
    throw new ConfigError(
      'This server has no demo project (GET /demo/config.json answered ' +
        `${response.status}). Start it with \`npm start\`, or build the app with VITE_SA_PROJECT_ID and VITE_SA_API_KEY.`,
    );
  }
  const body = (await response.json()) as Partial<ExampleConfig>;
  if (typeof body.projectId !== 'string' || typeof body.apiKey !== 'string') throw new ConfigError('/demo/config.json has no projectId and apiKey.');
  return { projectId: body.projectId, apiKey: body.apiKey, readKey: typeof body.readKey === 'string' ? body.readKey : null, endpoint };
}

/** The client configuration: every optional feature on, and quick sends so the Events page is lively. */
export function analyticsConfig(example: ExampleConfig): AnalyticsConfig {
  return {
    apiKey: example.apiKey,
    projectId: example.projectId,
    ...(example.endpoint === undefined ? {} : { endpoint: example.endpoint }),
    debug: import.meta.env.DEV,
    // A demo wants to see events arrive within a second or so; the default is 10 s.
    flushInterval: 1000,
    enableAutoPageTracking: true,
    enablePerformanceTracking: true,
    enableErrorTracking: true,
    enableABTesting: true,
    abTestConfig: { experiments: [CTA_EXPERIMENT] },
  };
}
