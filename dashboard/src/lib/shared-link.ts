/**
 * A shared link's address is the dashboard with the token after `#` (`/dashboard/#/shared/sa_l_…`):
 * the fragment goes in no request and no server log. The app reads it once, keeps it for the tab
 * and takes it out of the address.
 */

const SHARED = /^#\/shared\/(sa_l_[A-Za-z0-9]{20,64})\/?$/;

/** The token of a shared link's hash, or null. */
export function sharedTokenOf(hash: string): string | null {
  return SHARED.exec(hash)?.[1] ?? null;
}

/** The full address of a link, from the path the server answered and this page's origin. */
export function sharedLinkUrl(origin: string, path: string): string {
  return `${origin}${path}`;
}
