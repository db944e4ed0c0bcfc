/**
 * Request and response bodies: their sizes (always, from what the page already holds: a string's
 * length, a Blob's size, never a read), and their text for allow-listed URLs with body capture on,
 * cut at the cap. A response body is read from a clone, as a stream, only up to the cap, and only
 * when its type is text: the page's own read of the body is untouched.
 */

/** Content types whose bodies are recorded as text. */
const TEXTUAL = /^(?:text\/|application\/(?:json|xml|x-www-form-urlencoded|javascript|graphql|[\w.+-]+\+(?:json|xml)))/i;

/** True when a body of `contentType` is text. */
export function isTextual(contentType: string | null): boolean {
  return contentType !== null && TEXTUAL.test(contentType.trim());
}

/** Bytes of `text` in UTF-8. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Two bytes below U+0800, four for a surrogate pair (two units), three for the rest of the BMP.
    if (code >= 0x80) bytes += code >= 0x800 && (code < 0xd800 || code > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/** Size in bytes of a body as `fetch`, XHR or `sendBeacon` takes it, when it can be told without reading. */
export function bodySize(body: unknown): number | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') return utf8Length(body);
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size;
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (ArrayBuffer.isView(body)) return body.byteLength;
  if (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams) return utf8Length(body.toString());
  return undefined;
}

/** A request body as text, at most `max` characters; binary bodies as a note of their size. */
export function requestBodyText(body: unknown, max: number): string | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') return body.slice(0, max);
  if (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams) return body.toString().slice(0, max);
  if (typeof FormData !== 'undefined' && body instanceof FormData) {
    const parts: string[] = [];
    let length = 0;
    for (const [name, value] of body) {
      const part = `${name}=${typeof value === 'string' ? value : `[file ${value.size} bytes]`}`;
      parts.push(part);
      length += part.length + 1;
      if (length > max) break;
    }
    return parts.join('&').slice(0, max);
  }
  const size = bodySize(body);
  return size === undefined ? '[stream]' : `[binary ${size} bytes]`;
}

/**
 * The text of a response's body, at most `max` characters, read from a clone; undefined when its
 * type is not text or it cannot be read. Stops reading (and cancels the clone) at the cap.
 */
export async function readResponseText(response: Response, max: number): Promise<string | undefined> {
  if (!isTextual(response.headers.get('content-type'))) return undefined;
  let clone: Response;
  try {
    clone = response.clone();
  } catch {
    return undefined; // Already read by the page.
  }
  const reader = clone.body?.getReader();
  if (reader === undefined) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (text.length >= max) {
        await reader.cancel().catch(() => undefined);
        return text.slice(0, max);
      }
    }
    return (text + decoder.decode()).slice(0, max);
  } catch {
    return text === '' ? undefined : text.slice(0, max);
  }
}
