import { randomBytes } from 'node:crypto';
import type { RecordedEvent } from '../../protocol/index.js';
import type { ApiKeyRecord, EventDimensions, Project, StoredEvent, StoredRecordingChunk } from '../../server/store/event-store.js';

/**
 * Builders for the store tests. Every test works in its own project (`newProjectId()`), so a store
 * shared by several tests (one PostgreSQL database per file) never mixes their rows.
 */

/** Report columns all null: spread it and set those a test is about. */
export const NO_DIMENSIONS: Readonly<EventDimensions> = {
  path: null,
  host: null,
  referrerHost: null,
  channel: null,
  utmSource: null,
  utmMedium: null,
  utmCampaign: null,
  browser: null,
  os: null,
  device: null,
  screenClass: null,
  anonymousId: null,
  country: null,
};

/**
 * 1,000 page views of one device on UTC day `day` (days since the epoch): a value frequent enough
 * for the background to keep its top lists ahead (`reports/filtered-ahead.ts`) once the day is
 * built, when the day is in the last year.
 */
export function frequentValueDay(projectId: string, day: number): StoredEvent[] {
  return Array.from({ length: 1000 }, (_, i) =>
    makeEvent(projectId, i, {
      timestamp: day * 86_400_000 + i * 1000,
      receivedAt: day * 86_400_000 + i * 1000,
      properties: {},
      dimensions: { ...NO_DIMENSIONS, device: 'mobile', path: '/' },
    }),
  );
}

/** A recent instant; tests place their data around it. Retention tests use far older instants. */
export const T0 = 1_760_000_000_000;

/** A fresh project id. */
export function newProjectId(): string {
  return `p_${randomBytes(6).toString('hex')}`;
}

/** A time-ordered, zero-padded event id: `id(1) < id(2)` as strings too. */
export function eventId(n: number): string {
  return `evt-${String(n).padStart(6, '0')}`;
}

/** An event with every field set; override what the test is about. */
export function makeEvent(projectId: string, n: number, overrides: Partial<StoredEvent> = {}): StoredEvent {
  return {
    projectId,
    eventId: eventId(n),
    eventType: 'page_view',
    userId: 'user-1',
    sessionId: 'session-1',
    timestamp: T0 + n,
    clientTimestamp: null,
    receivedAt: T0 + n + 5,
    properties: { path: `/p/${n}`, n, ok: true, none: null },
    userAgent: 'Mozilla/5.0 (test)',
    ipAddress: '203.0.113.0',
    isBot: false,
    visitorId: 'visitor-1',
    ...overrides,
  };
}

/** `count` recorded events whose `data.i` is their absolute index from `offset`. */
export function recorded(offset: number, count: number): RecordedEvent[] {
  return Array.from({ length: count }, (_, k) => ({ type: 3, data: { i: offset + k }, timestamp: T0 + offset + k }));
}

/** A chunk of `count` events at `offset`; override the rest. */
export function makeChunk(
  projectId: string,
  sessionId: string,
  offset: number,
  count: number,
  overrides: Partial<StoredRecordingChunk> = {},
): StoredRecordingChunk {
  return {
    projectId,
    sessionId,
    eventOffset: offset,
    eventsJson: JSON.stringify(recorded(offset, count)),
    eventCount: count,
    duration: offset / 10,
    startUrl: 'https://example.test/start',
    userId: 'user-1',
    isFinal: false,
    receivedAt: T0 + offset,
    ...overrides,
  };
}

/** A project record. */
export function makeProject(id: string, overrides: Partial<Project> = {}): Project {
  return { id, name: `Project ${id}`, createdAt: T0, fullIp: false, corsOrigins: [], bots: 'drop', ...overrides };
}

/** A key record with a random hash. */
export function makeKey(projectId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const hash = randomBytes(32).toString('hex');
  return {
    id: `key_${randomBytes(6).toString('hex')}`,
    projectId,
    kind: 'write',
    hash,
    prefix: hash.slice(0, 8),
    createdAt: T0,
    revokedAt: null,
    ...overrides,
  };
}
