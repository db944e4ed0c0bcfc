/**
 * Which JavaScript realm sent a request: the page, or a dedicated worker.
 *
 * playwright reports a dedicated worker's requests as the page's (`request.frame()` is the page's
 * main frame), so it cannot tell them apart. Chromium's DevTools protocol can: every target (the
 * page, each worker) has its own `Network` domain, and a request is reported on the session of the
 * target that made it, with an `initiator` stack naming the script. So:
 *
 * - {@link watchPageRequests}: a CDP session on the page target; batch POSTs seen here were made by
 *   the page's own realm (the in-process path).
 * - {@link watchWorkerRequests}: a CDP session on the worker target (found with `Target.getTargets`
 *   through a browser session and attached with `Target.attachToTarget`); batch POSTs seen here
 *   were made inside the worker.
 *
 * A second, independent signal: with `Referrer-Policy: unsafe-url` on every response of the static
 * server, a `fetch()` carries as `Referer` the URL of its realm's global object: the page's URL
 * from the page, the worker script's URL from a worker started from a file.
 */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

/** A request as one target's `Network.requestWillBeSent` reported it. */
export interface ObservedRequest {
  method: string;
  url: string;
  /** `script`, `preflight`, `other`, … */
  initiatorType: string;
  /** URL of the script on top of the initiator stack, when there is one. */
  initiatorUrl: string | undefined;
}

/** Requests seen on one target, collected until `stop()`. */
export interface RequestWatch {
  readonly requests: readonly ObservedRequest[];
  /** The target's URL (for a worker: its script URL, or a `blob:` URL). */
  readonly targetUrl: string;
  stop(): Promise<void>;
}

interface RequestWillBeSent {
  request: { method: string; url: string };
  initiator: { type: string; stack?: { callFrames: Array<{ url: string }> } };
}

function observed(event: RequestWillBeSent): ObservedRequest {
  return {
    method: event.request.method,
    url: event.request.url,
    initiatorType: event.initiator.type,
    initiatorUrl: event.initiator.stack?.callFrames[0]?.url,
  };
}

/** Watches the requests the page target itself makes. Start it before the page loads. */
export async function watchPageRequests(context: BrowserContext, page: Page): Promise<RequestWatch> {
  const session = await context.newCDPSession(page);
  const requests: ObservedRequest[] = [];
  session.on('Network.requestWillBeSent', (event) => requests.push(observed(event)));
  await session.send('Network.enable');
  return {
    requests,
    targetUrl: page.url(),
    stop: () => session.detach().catch(() => undefined),
  };
}

/**
 * Watches the requests of the page's dedicated worker whose URL passes `matches` (the one worker
 * the client started). Attach after the client reported `mode: 'worker'`; requests made before are
 * not seen.
 * @throws when no such worker target exists
 */
export async function watchWorkerRequests(browser: Browser, matches: (url: string) => boolean): Promise<RequestWatch> {
  const session: CDPSession = await browser.newBrowserCDPSession();
  const { targetInfos } = await session.send('Target.getTargets');
  const workers = targetInfos.filter((target) => target.type === 'worker' && matches(target.url));
  if (workers.length !== 1) {
    await session.detach();
    throw new Error(`expected one worker target, found ${workers.length}: ${targetInfos.map((t) => `${t.type} ${t.url}`).join(', ')}`);
  }
  const worker = workers[0]!;
  // Not flattened: playwright's CDPSession cannot address a child session, so the worker's
  // protocol messages travel wrapped in Target.sendMessageToTarget / receivedMessageFromTarget.
  const { sessionId } = await session.send('Target.attachToTarget', { targetId: worker.targetId, flatten: false });
  const requests: ObservedRequest[] = [];
  const replies = new Map<number, () => void>();
  session.on('Target.receivedMessageFromTarget', (event) => {
    if (event.sessionId !== sessionId) return;
    const message = JSON.parse(event.message) as { id?: number; method?: string; params?: unknown };
    if (message.method === 'Network.requestWillBeSent') requests.push(observed(message.params as RequestWillBeSent));
    else if (message.id !== undefined) replies.get(message.id)?.();
  });
  const enabled = new Promise<void>((resolve) => replies.set(1, resolve));
  await session.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id: 1, method: 'Network.enable' }) });
  await enabled;
  return {
    requests,
    targetUrl: worker.url,
    stop: () => session.detach().catch(() => undefined),
  };
}

/** The batch POSTs among `requests` (not the CORS preflights). */
export function batchPosts(requests: readonly ObservedRequest[]): ObservedRequest[] {
  return requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/api/v1/events/batch');
}
