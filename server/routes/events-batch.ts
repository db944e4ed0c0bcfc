import type { Middleware } from 'koa';
import { type BackendEvent, type BatchResponse, checkBatch } from '../../protocol/index.js';
import { parseJson, requireIngestType, sentAtOf } from '../body.js';
import { acceptedTimeWindow, measureSkew, outsideWindow } from '../clock-skew.js';
import { HttpError } from '../http-error.js';
import { uuidV7 } from '../ids.js';
import { normalizeIp, truncateIp } from '../ip-address.js';
import { authenticate } from '../middleware/authenticate.js';
import { createDimensionExtractor } from '../reports/dimensions.js';
import type { StoredEvent } from '../store/event-store.js';
import type { RouteContext } from './route-context.js';

/**
 * `POST /api/v1/events/batch` (docs/protocol.md): a bare JSON array of backend events, by header
 * credentials or, as the beacon form, by query credentials with `text/plain`. Valid events are
 * stored even when others in the batch are not; the answer comes after the commit. Each stored
 * event gets its cookieless visitor id (`visitor-id.ts`); bot events are flagged, dropped or kept
 * as the project says (`bot-filter.ts`), and its report columns (`reports/dimensions.ts`: each
 * distinct user agent parsed once per app; the client's country looked up once per request).
 */
export function eventsBatchRoute(rc: RouteContext): Middleware {
  const dimensions = createDimensionExtractor();
  return async (ctx) => {
    const { beacon } = requireIngestType(ctx);
    const caller = await authenticate(ctx, rc, 'write', { allowQuery: beacon });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const body = parseJson(await rc.readBatchBody(ctx, beacon));
    const receivedAt = rc.now();
    const sentAt = sentAtOf(ctx, beacon);
    const { offsetMs } = measureSkew(sentAt, receivedAt, rc.skewThresholdMs);
    const window = acceptedTimeWindow(receivedAt);
    const check = checkBatch(body, rc.maxEventsPerBatch, (_e, time) => (time === null ? null : outsideWindow(time + offsetMs, window)));
    if (!check.ok) throw new HttpError(check.code, check.error);
    if (check.rejected.length > 0) rc.metrics.eventsRejected(check.rejected.length);
    if (check.events.length === 0 && check.rejected.length > 0) {
      throw new HttpError('VALIDATION_ERROR', 'No event of the batch is valid.', { details: { errors: check.rejected } });
    }
    const rawIp = normalizeIp(ctx.ip);
    // The country too comes from the full address, once per request (reports/country.ts).
    const country = rc.countries.countryOf(rawIp);
    const ipAddress = rawIp && !caller.project.fullIp ? truncateIp(rawIp) : rawIp;
    const projectId = caller.project.id;
    const requestAgent = ctx.get('user-agent') || null;
    // The visitor id hashes the full address, before truncation (visitor-id.ts).
    const visitorOf = await rc.visitorIds.forRequest(projectId, rawIp, receivedAt);
    const policy = caller.project.bots;
    const stored: StoredEvent[] = [];
    let botsDropped = 0;
    for (let i = 0; i < check.events.length; i++) {
      const e = check.events[i] as BackendEvent;
      const userAgent = e.user_agent ?? requestAgent;
      // `keep` skips the check; `drop` acknowledges a bot's event without storing it, never a 4xx,
      // so that no client retries it, and says so in `bots_dropped` (docs/protocol.md, "Bot events").
      const isBot = policy !== 'keep' && rc.bots.isBotEvent(userAgent, e.properties);
      if (isBot && policy === 'drop') {
        botsDropped++;
        continue;
      }
      const time = check.times[i] as number | null;
      // One literal, not a spread of the server fields into another object: one allocation and one
      // object shape per event.
      stored.push({
        projectId,
        eventId: e.event_id ?? uuidV7(receivedAt),
        eventType: e.event_type,
        userId: e.user_id ?? null,
        sessionId: e.session_id ?? null,
        timestamp: time === null ? receivedAt : time + offsetMs,
        // The client's time as sent, corrected or not: reports and exports can tell the two apart.
        clientTimestamp: time,
        receivedAt,
        properties: e.properties ?? {},
        ipAddress,
        userAgent,
        isBot,
        visitorId: visitorOf(userAgent),
        dimensions: dimensions.extract(e.properties ?? {}, userAgent, country),
      });
    }
    if (botsDropped > 0) {
      rc.metrics.botEventsDropped(botsDropped);
      rc.droppedEvents.dropped(projectId, botsDropped, 'bots: drop');
    }

    // Dropped bot events count as processed (SPEC's meaning: accepted, not to be resent), and the
    // answer says how many of them were not stored: nothing is acknowledged and thrown away unsaid.
    const answer: BatchResponse = { success: true, processed: check.events.length };
    if (botsDropped > 0) answer.bots_dropped = botsDropped;
    if (check.rejected.length > 0) answer.errors = check.rejected;
    if (stored.length > 0) {
      // Only numbers cross the wait for the commit: the events themselves may be collected as soon
      // as the store has encoded them (`write-queue.ts`).
      const count = stored.length;
      const bots = flaggedIndexes(stored);
      const result = await rc.writeQueue.submit(stored, []);
      let duplicates = 0;
      for (const inserted of result.eventInserted) if (!inserted) duplicates++;
      let flagged = 0;
      for (const i of bots) if (result.eventInserted[i]) flagged++;
      rc.metrics.eventsAccepted(count - duplicates);
      rc.metrics.eventsDeduplicated(duplicates);
      if (flagged > 0) rc.metrics.botEventsFlagged(flagged);
    }
    ctx.body = answer;
  };
}

/** Positions of the events flagged as a bot's (kept under the `flag` policy). */
function flaggedIndexes(stored: readonly StoredEvent[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < stored.length; i++) if (stored[i]?.isBot) out.push(i);
  return out;
}
