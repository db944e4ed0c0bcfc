import { describe, expect, it } from 'vitest';
import { AGGREGATE_COLUMNS } from '../aggregates/aggregate-schema.js';
import type { EventDimensions, StoredEvent } from '../event-store.js';
import { REPORT_COLUMNS } from '../reports/report-columns.js';
import { encodeBatch } from './sqlite-event-writer.js';

const dims = (path: string | null, browser: string | null, country: string | null = null): EventDimensions => ({
  path,
  host: 'example.com',
  referrerHost: null,
  channel: 'direct',
  utmSource: null,
  utmMedium: null,
  utmCampaign: null,
  browser,
  os: 'Linux',
  device: 'desktop',
  screenClass: null,
  anonymousId: null,
  country,
});

const event = (n: number, over: Partial<StoredEvent>): StoredEvent => ({
  projectId: 'p1',
  eventId: `id-${n}`,
  eventType: 'click',
  userId: 'u1',
  sessionId: 's1',
  timestamp: 1_700_000_000_000 + n + 0.4,
  clientTimestamp: null,
  receivedAt: 1_700_000_000_100 + n,
  properties: { n },
  userAgent: 'agent',
  ipAddress: '10.0.0.0',
  isBot: false,
  visitorId: 'v1',
  ...over,
});

/** The text columns an encoded event refers to, read back through `strings`. */
function decoded(batch: ReturnType<typeof encodeBatch>, i: number): Array<string | null | number> {
  const at = (k: number): string | null => {
    const index = batch.refs[i * 21 + k] as number;
    return index < 0 ? null : (batch.strings[index] as string);
  };
  return [at(0), at(1), at(2), at(3), at(4), at(5), batch.refs[i * 21 + 6] as number, ...Array.from({ length: 14 }, (_, k) => at(k + 7))];
}

describe('the group commit\'s aggregate values', () => {
  it('are read in the aggregate dimensions\' order: the eleven filter columns, the country, the event type, an error\'s message', () => {
    // prepareEventWriter travels as source and cannot import this order, so it is written out
    // there: refs 8 to 19 hold REPORT_COLUMNS up to the anonymous id, ref 20 the country, and the
    // aggregates read refs 8 to 18, ref 20, the type, then the message read from the properties.
    // This holds the two together.
    expect([REPORT_COLUMNS[11], REPORT_COLUMNS[12]]).toEqual(['anonymous_id', 'country']);
    expect(AGGREGATE_COLUMNS).toEqual([...REPORT_COLUMNS.slice(0, 11), REPORT_COLUMNS[12], 'event_type', 'error_message']);
  });
});

describe('encodeBatch(batch)', () => {
  it('refers to each column value exactly, through repeats, nulls between repeats and values that come back', () => {
    const events = [
      event(0, { dimensions: dims('/a', 'Chrome', 'GB') }),
      event(1, { userId: null, sessionId: 's2', isBot: true, dimensions: dims(null, 'Chrome') }),
      event(2, { userId: 'u1', projectId: 'p2', dimensions: dims('/a', null) }),
      event(3, { userAgent: null, ipAddress: null, visitorId: null }),
      event(4, { userId: 'u2', clientTimestamp: 1_600_000_000_000, dimensions: dims('/b', 'Firefox', 'US') }),
      event(5, { projectId: 'p1', eventType: 'page_view', dimensions: dims('/a', 'Chrome', 'GB') }),
    ];
    const batch = encodeBatch({ events, chunks: [] });
    expect(batch.refs).toHaveLength(events.length * 21);
    expect(new Set(batch.strings).size).toBe(batch.strings.length);
    events.forEach((e, i) => {
      const d = e.dimensions;
      const report =
        d === undefined
          ? Array.from({ length: 13 }, () => null)
          : [d.path, d.host, d.referrerHost, d.channel, d.utmSource, d.utmMedium, d.utmCampaign, d.browser, d.os, d.device, d.screenClass, d.anonymousId, d.country];
      expect(decoded(batch, i)).toEqual([e.projectId, e.eventType, e.userId, e.sessionId, e.userAgent, e.ipAddress, e.isBot ? 1 : 0, e.visitorId, ...report]);
      expect([batch.times[i * 3], batch.times[i * 3 + 1], batch.times[i * 3 + 2]]).toEqual([e.timestamp, e.clientTimestamp ?? Number.NaN, e.receivedAt]);
      expect([batch.texts[i * 2], JSON.parse(batch.texts[i * 2 + 1] as string)]).toEqual([e.eventId, e.properties]);
    });
  });
});
