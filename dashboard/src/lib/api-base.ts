/**
 * Where the API is, seen from the dashboard's own address. The server serves the dashboard at
 * `<base path>/dashboard/`, so what comes before `/dashboard` is the base path of the API
 * (`start --base-path /stats` → `/stats/dashboard/` calls `/stats/api/v1/…`).
 */
export function apiBaseFromPath(pathname: string): string {
  const at = pathname.lastIndexOf('/dashboard');
  if (at < 0) return '';
  return pathname.slice(0, at).replace(/\/+$/, '');
}
