/**
 * The page's `fetch`, wrapped: per call a cap check, a URL string and a record of references; the
 * answer's status and time when its promise settles. The page gets the original promise, unchanged.
 * A response body is read only for an allow-listed URL with body capture on, from a clone, bounded
 * (`network-body.ts`).
 */
import { readResponseText } from './network-body.js';
import { headerPairs } from './network-headers.js';
import { type RawRequest, type RequestHooks, failureOf } from './network-request.js';

/** Wraps `win.fetch`; returns the unwrap. */
export function wrapFetch(win: Window, hooks: RequestHooks): () => void {
  const page = win as Window & typeof globalThis;
  const original = page.fetch;
  if (typeof original !== 'function') return () => undefined;
  const RequestClass = page.Request;

  const wrapper = function (this: unknown, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    let request: RawRequest | null = null;
    let bodyCopy: Request | undefined;
    try {
      // Most calls pass a string: no Request check or conversion for them.
      const isRequest = typeof input !== 'string' && typeof RequestClass === 'function' && input instanceof RequestClass;
      request = hooks.begin('fetch', init?.method ?? (isRequest ? input.method : 'GET'), typeof input === 'string' ? input : isRequest ? input.url : String(input));
      if (request !== null) {
        request.body = init?.body ?? undefined;
        if (request.allowed && hooks.recordHeaders) request.requestHeaders = headerPairs(init?.headers ?? (isRequest ? input.headers : undefined));
        // A Request's own body is a stream the page's call will read: copy it first.
        if (request.allowed && hooks.recordBodies && isRequest && init?.body === undefined && input.body !== null) bodyCopy = input.clone();
      }
    } catch {
      request = null;
    }
    const promise = original.call(this, input, init);
    if (request !== null) {
      const r = request;
      promise.then(
        (response) => answered(r, response, bodyCopy),
        (error: unknown) => {
          r.t1 = hooks.perfNow();
          r.error = failureOf(error);
          hooks.done(r);
        },
      );
    }
    return promise;
  };

  function answered(r: RawRequest, response: Response, bodyCopy: Request | undefined): void {
    r.t1 = hooks.perfNow();
    r.status = response.status;
    r.response = response;
    if (!(r.allowed && hooks.recordBodies)) return hooks.done(r);
    const requestText = bodyCopy?.text().then((text) => (r.body = text), () => undefined);
    Promise.all([requestText, readResponseText(response, hooks.maxBodyLength).then((text) => (r.responseBody = text))]).then(
      () => hooks.done(r),
      () => hooks.done(r),
    );
  }

  page.fetch = wrapper as typeof fetch;
  return () => {
    if (page.fetch === (wrapper as typeof fetch)) page.fetch = original;
  };
}
