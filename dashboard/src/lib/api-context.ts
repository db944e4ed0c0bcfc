/** The signed-in project's API client, for every panel below the app. */
import { createContext, useContext } from 'react';
import type { ApiClient } from '../api/api-client.js';

export const ApiContext = createContext<ApiClient | null>(null);

/** The API client; throws when used outside the signed-in app. */
export function useApi(): ApiClient {
  const api = useContext(ApiContext);
  if (api === null) throw new Error('useApi() needs <ApiContext.Provider value={client}> above it: render panels inside the signed-in app.');
  return api;
}
