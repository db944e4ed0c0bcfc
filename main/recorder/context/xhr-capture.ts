/**
 * The page's `XMLHttpRequest`, wrapped on its prototype: `open` notes the method and URL in a
 * WeakMap, `send` starts a record and listens for the end; `setRequestHeader` notes headers only
 * when header capture is on. The answer's headers and text are read when the entry is made, and
 * only for allow-listed URLs.
 */
import { type RawRequest, type RequestHooks, failureOf } from './network-request.js';

interface Opened {
  method: string;
  url: string;
  headers?: Array<[string, string]>;
}

/** Wraps `win.XMLHttpRequest`'s `open`, `setRequestHeader` and `send`; returns the unwrap. */
export function wrapXhr(win: Window, hooks: RequestHooks): () => void {
  const XHR = (win as Window & typeof globalThis).XMLHttpRequest;
  if (typeof XHR !== 'function') return () => undefined;
  const proto = XHR.prototype;
  const { open, send, setRequestHeader } = proto;
  const opened = new WeakMap<XMLHttpRequest, Opened>();

  const openWrapper = function (this: XMLHttpRequest, ...args: unknown[]): void {
    opened.set(this, { method: String(args[0]), url: String(args[1]) });
    return (open as (...a: unknown[]) => void).apply(this, args);
  };
  const headerWrapper = function (this: XMLHttpRequest, name: string, value: string): void {
    if (hooks.recordHeaders) {
      const o = opened.get(this);
      if (o !== undefined) (o.headers ??= []).push([String(name), String(value)]);
    }
    return setRequestHeader.call(this, name, value);
  };
  const sendWrapper = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null): void {
    const o = opened.get(this);
    let request: RawRequest | null = null;
    try {
      if (o !== undefined) request = hooks.begin('xhr', o.method, o.url);
      if (request !== null) {
        request.body = body ?? undefined;
        request.xhr = this;
        if (request.allowed) request.requestHeaders = o?.headers;
        track(this, request);
      }
    } catch {
      // Recording must never stop the page's request.
    }
    return send.call(this, body);
  };

  function track(xhr: XMLHttpRequest, r: RawRequest): void {
    let failure: string | undefined;
    const onFail = (event: Event): void => {
      failure = failureOf(event.type);
    };
    const onEnd = (): void => {
      xhr.removeEventListener('abort', onFail);
      xhr.removeEventListener('timeout', onFail);
      xhr.removeEventListener('loadend', onEnd);
      r.t1 = hooks.perfNow();
      r.status = xhr.status;
      if (r.status === 0) r.error = failure ?? 'network error';
      // Read now: the page may open the same object again before the entry is made.
      if (r.allowed && hooks.recordBodies && (xhr.responseType === '' || xhr.responseType === 'text')) {
        r.responseBody = xhr.responseText.slice(0, hooks.maxBodyLength);
      }
      hooks.done(r);
    };
    xhr.addEventListener('abort', onFail);
    xhr.addEventListener('timeout', onFail);
    xhr.addEventListener('loadend', onEnd);
  }

  proto.open = openWrapper as typeof proto.open;
  proto.setRequestHeader = headerWrapper;
  proto.send = sendWrapper;
  return () => {
    if (proto.open === (openWrapper as typeof proto.open)) proto.open = open;
    if (proto.setRequestHeader === headerWrapper) proto.setRequestHeader = setRequestHeader;
    if (proto.send === sendWrapper) proto.send = send;
  };
}
