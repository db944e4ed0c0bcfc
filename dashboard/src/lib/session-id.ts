/**
 * Session ids for people to read. The client's ids are UUIDv7 (docs/protocol.md): the first 12
 * hex digits are the millisecond the session began, the same for every session of that minute, so
 * a table shows the random tail instead.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-([0-9a-f]{12})$/i;

/** The last 12 hex digits of a UUID, else the last 12 characters of any other longer id. */
export function shortSessionId(id: string | null | undefined): string {
  if (id === null || id === undefined || id === '') return '—';
  const match = UUID.exec(id);
  if (match?.[1] !== undefined) return match[1];
  return id.length > 12 ? `…${id.slice(-12)}` : id;
}
