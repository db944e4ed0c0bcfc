/**
 * What the heatmap is drawn over, found once per page and range: a recording of a session that
 * viewed the page (its latest such page view), else the page itself, live, at the address its
 * latest page view had, or on its most viewed host. Someone who may not read events or recordings
 * (a shared link) gets the live page on that host.
 */
import type { ApiClient } from '../api/api-client.js';
import type { ReportQuery } from '../api/reports.js';
import * as reports from '../api/reports.js';
import type { RecordedEvent, SessionsAnswer, TopAnswer } from '../api/wire-types.js';
import { pageViewsOf } from './heatmap-api.js';
import { type SnapshotMoment, chooseRecordedPageView, snapshotMoment, urlOf } from './snapshot-choice.js';

/** The backdrop of a page. */
export type BackdropSource =
  | { kind: 'snapshot'; sessionId: string; events: readonly RecordedEvent[]; moment: SnapshotMoment }
  | { kind: 'live'; url: string }
  /** Neither a recording nor the page's address is known. */
  | { kind: 'none' };

/** Finds the backdrop of `path` in the range of `q`. */
export async function findBackdrop(api: ApiClient, q: ReportQuery, path: string, signal?: AbortSignal): Promise<BackdropSource> {
  let url: string | null = null;
  try {
    const [views, recorded] = await Promise.all([pageViewsOf(api, q, path, signal), api.get<SessionsAnswer>('sessions', { limit: 100 }, signal)]);
    url = views.events.map(urlOf).find((u) => u !== null) ?? null;
    const chosen = chooseRecordedPageView(views.events, new Set(recorded.sessions.map((s) => s.session_id)));
    if (chosen !== null) {
      const recording = await reports.recording(api, chosen.sessionId, signal);
      const moment = snapshotMoment(recording.events, chosen.at);
      if (moment !== null) return { kind: 'snapshot', sessionId: chosen.sessionId, events: recording.events, moment };
    }
  } catch (error) {
    if (signal?.aborted) throw error;
    // Not allowed to read events or recordings, or none readable: the live page will do.
  }
  if (url === null) {
    const hosts = await api.get<TopAnswer>(
      'reports/top/host',
      { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), ...q.filters, page: path, limit: 1 },
      signal,
    );
    const host = hosts.rows[0]?.value;
    if (host !== undefined && host !== '') url = `https://${host}${path}`;
  }
  return url === null ? { kind: 'none' } : { kind: 'live', url };
}
