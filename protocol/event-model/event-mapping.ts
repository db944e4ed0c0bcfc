/**
 * Client event → backend event: the wire mapping (docs/protocol.md, docs/decisions.md).
 *
 * The main thread imports this file too (its `sendBeacon` path), so it depends on nothing but the
 * property rules beside it. It runs once per event per send attempt, so it makes one properties
 * object and one result object and nothing else on the common path.
 */
import type { BackendEvent, PropertyValue } from '../wire-types.js';
import { wireValue } from './properties.js';
import type { AnalyticsEvent, AnalyticsEventType } from './analytics-event.js';

/** `event_type` of each non-`track` kind; a `track` sends its event name. */
const EVENT_TYPE: Readonly<Record<Exclude<AnalyticsEventType, 'track'>, string>> = {
  page: 'page_view',
  identify: 'user_identify',
  alias: 'user_alias',
};

/**
 * Maps one internal event to the backend event of the batch body.
 *
 * - `track` → `event_type` = the event name; `page` → `page_view`; `identify` → `user_identify`
 *   (`user_id` = the identified user, properties = the traits); `alias` → `user_alias`
 *   (`user_id` = the new id, `properties.previous_id` = the old one).
 * - `properties` = the call's properties flattened with the context: `anonymous_id`, `locale`,
 *   `timezone` as they are; `page`, `screen`, `library` as JSON strings; `webdriver: true` when the
 *   page is automated; the super properties and groups (`context.properties`) as they are. A
 *   property the call gives wins over a context member of the same name, except `page`/`screen` of
 *   a `page_view`, which the protocol defines.
 * - The wire carries scalars only: object values (an identify trait `subscription`) are
 *   JSON-encoded, `undefined` and functions are dropped, non-finite numbers become `null`, and
 *   a `__proto__` key is dropped (the server refuses it, and it must never be assigned).
 * - For `page`, the call's properties are the page properties: they go into `properties.page`
 *   (over `context.page`), not flat beside it.
 *
 * @param timezone - the device's time zone, for an event whose context has none: the facade
 *   leaves it out, because the first `Intl` call of a page costs its main thread tens of
 *   milliseconds (docs/decisions.md, "Start-up"), and the core adds it off the main thread.
 */
export function toBackendEvent(e: AnalyticsEvent, timezone?: string): BackendEvent {
  const ctx = e.context;
  const props: Record<string, PropertyValue> = {};
  props.anonymous_id = e.anonymousId;
  if (ctx.locale !== undefined) props.locale = ctx.locale;
  const zone = ctx.timezone ?? timezone;
  if (zone !== undefined) props.timezone = zone;
  if (ctx.library !== undefined) setContextMember(props, 'library', ctx.library);
  if (ctx.webdriver === true) props.webdriver = true;
  if (ctx.properties !== undefined) copyProperties(props, ctx.properties);

  let eventType: string;
  if (e.type === 'page') {
    eventType = EVENT_TYPE.page;
    const page = e.properties === undefined ? ctx.page : { ...ctx.page, ...definedOnly(e.properties) };
    setEncoded(props, 'page', page ?? {});
    if (ctx.screen !== undefined) setContextMember(props, 'screen', ctx.screen);
    else props.screen = '{}';
  } else {
    if (ctx.page !== undefined) setContextMember(props, 'page', ctx.page);
    if (ctx.screen !== undefined) setContextMember(props, 'screen', ctx.screen);
    if (e.properties !== undefined) copyProperties(props, e.properties);
    if (e.type === 'track') eventType = e.event ?? '';
    else {
      eventType = EVENT_TYPE[e.type] ?? e.type;
      if (e.type === 'alias' && e.previousId !== undefined) props.previous_id = e.previousId;
    }
  }

  return {
    event_id: e.id,
    event_type: eventType,
    user_id: e.userId,
    session_id: e.sessionId,
    timestamp: isoTimestamp(e.timestamp),
    properties: props,
    user_agent: ctx.userAgent,
  };
}

/** Copies `source` into `target` as wire scalars ({@link wireValue}). */
function copyProperties(target: Record<string, PropertyValue>, source: Readonly<Record<string, unknown>>): void {
  for (const key in source) {
    // Own keys only, and never `__proto__`: assigning it would replace `target`'s prototype.
    if (key === '__proto__' || !Object.hasOwn(source, key)) continue;
    const value = wireValue(source[key]);
    if (value !== undefined) target[key] = value;
  }
}

/**
 * JSON text of context members by object identity. The facade shares one context object among
 * the events of a page (and structured clone keeps that sharing within a post), so a post of
 * 10,000 events encodes its page once. Context members are therefore treated as immutable: the
 * facade replaces them when the page changes, it never edits them in place.
 */
const contextJson = new WeakMap<object, string>();

function setContextMember(target: Record<string, PropertyValue>, key: string, value: object): void {
  const json = contextJson.get(value);
  if (json === undefined) {
    setEncoded(target, key, value);
    const encoded = target[key];
    if (typeof encoded === 'string') contextJson.set(value, encoded);
    return;
  }
  target[key] = json;
}

/** Sets `target[key]` to the JSON text of `value`; leaves it unset when `value` cannot be encoded. */
function setEncoded(target: Record<string, PropertyValue>, key: string, value: unknown): void {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) target[key] = json;
  } catch {
    // A cyclic object survives structured clone but not JSON; dropping one property beats
    // losing the event.
  }
}

function definedOnly(source: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in source) {
    if (key === '__proto__' || !Object.hasOwn(source, key)) continue;
    if (source[key] !== undefined) out[key] = source[key];
  }
  return out;
}

/** ISO 8601 with milliseconds in UTC; omitted for a timestamp that names no instant. */
function isoTimestamp(ms: number): string | undefined {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
