import { createHash, randomBytes } from 'node:crypto';
import { HttpError } from './http-error.js';
import type { Logger } from './logger.js';
import type { EventStore } from './store/event-store.js';

/**
 * Cookieless visitor ids (docs/decisions.md, "Cookieless visitor counting"): for every event the
 * server stores a hash of the day's salt, the project, the client's full address and the user
 * agent. Within one UTC day the same browser on the same address gets the same id in every
 * process, so unique visitors are `COUNT(DISTINCT visitor_id)` per day without any id on the
 * device; across days, projects and addresses the ids are unrelated.
 *
 * The salt is 32 random bytes per UTC day, made by whichever process needs it first and shared
 * through the store's `salts` table (never the events table, never logged or exported). Once a
 * day is over and its grace period past, its salt is deleted: from then on nobody, the operator
 * included, can recompute that day's ids from an address and a user agent, which is what makes
 * them unlinkable.
 */
export interface VisitorIds {
  /**
   * Prepares the ids of one request: resolves with a function from a user agent to the visitor id
   * (null when the address is unknown), which hashes each distinct user agent once.
   * @throws HttpError `STORAGE_UNAVAILABLE` (503) when the day's salt cannot be read or stored
   */
  forRequest(projectId: string, ip: string | null, receivedAt: number): Promise<(userAgent: string | null) => string | null>;
  /**
   * Deletes the salts whose day ended more than the grace period before `now`, if not done yet.
   * Every request does it; a timer calls it too, so that a quiet server does not keep yesterday's
   * salt until its next request (`serve.ts`).
   */
  expire(now: number): void;
}

/** Options of {@link createVisitorIds}. */
export interface VisitorIdOptions {
  store: EventStore;
  logger: Logger;
  /**
   * How long after midnight (UTC) the previous day's salt is kept, ms: a request received before
   * midnight may be handled after it, and server processes' clocks differ a little. Past it, a
   * process whose clock is that far behind would make a second salt for the day that ended.
   * @default 10 minutes
   */
  graceMs?: number;
  /** A new salt. @default 32 random bytes, base64url */
  newSalt?: () => string;
}

const DAY_MS = 86_400_000;

/** The UTC day of `ms` as `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/**
 * {@link utcDay} remembering the last two days it formatted: every request asks for two (its own
 * and the one the grace period reaches back to), and they change once a day, so the Date and the
 * string are made twice a day instead of twice per request.
 */
function rememberedUtcDay(): (ms: number) => string {
  const days = [Number.NaN, Number.NaN];
  const texts = ['', ''];
  let next = 0;
  return (ms) => {
    const day = Math.floor(ms / DAY_MS);
    if (day === days[0]) return texts[0] as string;
    if (day === days[1]) return texts[1] as string;
    const text = utcDay(ms);
    days[next] = day;
    texts[next] = text;
    next = 1 - next;
    return text;
  };
}

/** The visitor id: SHA-256 over the parts, separated by NUL (none of them holds one), first 16 bytes. */
export function hashVisitor(salt: string, projectId: string, ip: string, userAgent: string): string {
  return createHash('sha256').update(`${salt}\0${projectId}\0${ip}\0${userAgent}`).digest().subarray(0, 16).toString('base64url');
}

/** Creates the visitor-id maker of one server process. */
export function createVisitorIds(options: VisitorIdOptions): VisitorIds {
  const { store, logger } = options;
  const graceMs = options.graceMs ?? 10 * 60_000;
  const newSalt = options.newSalt ?? (() => randomBytes(32).toString('base64url'));
  /** Salts of the days in use, by day; a failed lookup is forgotten so the next request tries again. */
  const salts = new Map<string, Promise<string>>();
  /** Salts before this day have been deleted (by this process). */
  let deletedBefore = '';
  const dayOf = rememberedUtcDay();

  const saltOf = (day: string): Promise<string> => {
    let salt = salts.get(day);
    if (salt === undefined) {
      salt = store.dailySalt(day, newSalt());
      salt.catch(() => salts.delete(day));
      salts.set(day, salt);
    }
    return salt;
  };

  /** Once per day and process, past the grace period: forget and delete every older salt. */
  const expire = (receivedAt: number): void => {
    const keepFrom = dayOf(receivedAt - graceMs);
    if (keepFrom <= deletedBefore) return;
    deletedBefore = keepFrom;
    for (const day of salts.keys()) if (day < keepFrom) salts.delete(day);
    store.deleteSaltsBefore(keepFrom).catch((error: unknown) => {
      // Tried again by the next request; the salt stays apart from the events meanwhile.
      logger.warn('deleting old visitor salts failed', { error: error instanceof Error ? error.message : String(error) });
      deletedBefore = '';
    });
  };

  return {
    expire,
    async forRequest(projectId, ip, receivedAt) {
      expire(receivedAt);
      if (ip === null) return () => null;
      let salt: string;
      try {
        salt = await saltOf(dayOf(receivedAt));
      } catch (error) {
        logger.warn('reading the visitor salt failed', { error: error instanceof Error ? error.message : String(error) });
        throw new HttpError('STORAGE_UNAVAILABLE', 'The database is not reachable; retry later.', { headers: { 'Retry-After': '1' }, cause: error });
      }
      // One hash per distinct user agent of the request: usually one for the whole batch.
      let lastAgent: string | null | undefined;
      let lastId = '';
      let others: Map<string, string> | undefined;
      return (userAgent) => {
        if (userAgent === lastAgent) return lastId;
        const agent = userAgent ?? '';
        let id = others?.get(agent);
        if (id === undefined) {
          id = hashVisitor(salt, projectId, ip, agent);
          (others ??= new Map()).set(agent, id);
        }
        lastAgent = userAgent;
        lastId = id;
        return id;
      };
    },
  };
}
