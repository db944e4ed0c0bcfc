/**
 * The wire shapes the browser client uses, as plain TypeScript types. The structs that validate
 * them (`backend-event.ts`, `recording.ts`) infer exactly these (a compile-time check there keeps
 * them equal); they live apart so that the client package's type declarations name no superstruct
 * type, since the client ships without dependencies.
 */

/** A property value on the wire: scalars only (docs/protocol.md, "Backend event"). */
export type PropertyValue = string | number | boolean | null;

/** One element of a batch body, as validated. */
export interface BackendEvent {
  event_id?: string | null | undefined;
  event_type: string;
  user_id?: string | null | undefined;
  session_id?: string | null | undefined;
  timestamp?: string | null | undefined;
  properties?: Record<string, PropertyValue> | null | undefined;
  user_agent?: string | null | undefined;
  ip_address?: string | null | undefined;
}

/** One recorded DOM event (rrweb's), as uploaded. `data` is required but may be anything. */
export interface RecordedEvent {
  type: number;
  data: unknown;
  timestamp: number;
  delay?: number | undefined;
}

/** True when A and B are the same type (used by the structs' compile-time checks). */
export type SameType<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
