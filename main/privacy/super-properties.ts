/**
 * Super properties and groups (docs/decisions.md, "Super properties and groups"): properties that
 * every later event carries (`register()`), and the groups (accounts, companies) the visitor belongs
 * to (`group()`), carried as one JSON-encoded `groups` property. Both are stored like the user id and
 * cleared by `reset()`.
 *
 * They travel in the event context, not in each event's properties: one context object is shared
 * by every event of a page until the page or these properties change, so the facade makes no object
 * per event for them and a post clones them once (the wire mapping flattens them, the call's own
 * properties winning).
 */
import type { EventContext, EventProperties } from '../../protocol/event-model/analytics-event.js';
import { cleanProperties } from '../../protocol/event-model/properties.js';
import type { KeyValueStore } from '../session/storage.js';

/** The super properties and groups of one client. */
export interface SuperProperties {
  /** `context` with the current properties added; the same object while neither changes. */
  withContext(context: EventContext): EventContext;
  /** Adds `properties` (replacing keys already registered). */
  register(properties: unknown): void;
  unregister(key: string): void;
  /** A copy of the registered properties. */
  registered(): EventProperties;
  /** Tags later events with `key` as the visitor's group of `type`. */
  group(type: string, key: string): void;
  /** Forgets all of them (`reset()`). */
  clear(): void;
}

interface Stored {
  properties: EventProperties;
  groups: Record<string, string>;
}

/** Loads the stored super properties and groups of the client whose keys start with `keyPrefix`. */
export function createSuperProperties(store: KeyValueStore, keyPrefix: string): SuperProperties {
  const key = `${keyPrefix}properties`;
  let state: Stored = { properties: {}, groups: {} };
  try {
    const parsed = JSON.parse(store.get(key) ?? 'null') as Partial<Stored> | null;
    state = { properties: cleanProperties(parsed?.properties) ?? {}, groups: { ...(cleanProperties(parsed?.groups) as Record<string, string>) } };
  } catch {
    // Unreadable: start without.
  }
  let current: EventProperties | undefined;
  let base: EventContext | undefined;
  let extended: EventContext | undefined;

  function rebuild(): void {
    const hasGroups = Object.keys(state.groups).length > 0;
    current =
      !hasGroups && Object.keys(state.properties).length === 0
        ? undefined
        : hasGroups
          ? { ...state.properties, groups: JSON.stringify(state.groups) }
          : state.properties;
    base = undefined;
  }
  rebuild();

  /** Written only when they change, never per event. */
  function changed(): void {
    rebuild();
    if (current === undefined) store.remove(key);
    else store.set(key, JSON.stringify(state));
  }

  return {
    withContext(context) {
      if (current === undefined) return context;
      if (context !== base) {
        base = context;
        extended = { ...context, properties: current };
      }
      return extended!;
    },
    register(properties) {
      state.properties = { ...state.properties, ...cleanProperties(properties) };
      changed();
    },
    // Never changed in place: events of this task not yet posted share the current object.
    unregister(name) {
      state.properties = { ...state.properties };
      delete state.properties[String(name)];
      changed();
    },
    registered: () => ({ ...state.properties }),
    group(type, groupKey) {
      state.groups = { ...state.groups, [String(type)]: String(groupKey) };
      changed();
    },
    clear() {
      state = { properties: {}, groups: {} };
      changed();
    },
  };
}
