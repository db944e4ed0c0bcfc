/**
 * Collects the Content-Security-Policy violations of every page of a browser context: the
 * `securitypolicyviolation` events of its documents, and Chromium's console reports, which also come
 * from frames (a replay's iframe) and workers. The browser tests of the served apps assert none.
 */
import type { BrowserContext } from 'playwright-core';

/** Pushes a line per violation of `context`'s pages into `into`; call before the first page opens. */
export async function watchCspViolations(context: BrowserContext, into: string[]): Promise<void> {
  await context.exposeBinding('__saCspViolation', (_source, text: string) => into.push(text));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __saCspViolation(text: string): void }).__saCspViolation(`${e.effectiveDirective} ${e.blockedURI} in ${e.documentURI}`);
    });
  });
  context.on('console', (message) => {
    if (/content.security.policy/i.test(message.text())) into.push(`[console.${message.type()}] ${message.text()}`);
  });
}
