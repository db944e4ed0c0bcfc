/**
 * The server's counters, rendered as Prometheus text for `GET /metrics`. Hand-written because the
 * set is small and fixed: a client library would cost more than it saves.
 */
export interface Metrics {
  /** Counts one answered request by route and status. */
  request(route: string, status: number): void;
  eventsAccepted(n: number): void;
  eventsRejected(n: number): void;
  eventsDeduplicated(n: number): void;
  chunksStored(n: number): void;
  /** Bot events acknowledged and not stored (project policy `drop`). */
  botEventsDropped(n: number): void;
  /** Bot events stored with `is_bot` set (project policy `flag`). */
  botEventsFlagged(n: number): void;
  /** Records one group commit: its duration in seconds and its size in items. */
  commit(seconds: number, items: number): void;
  rateLimited(scope: 'project' | 'ip'): void;
  /** Sets the gauge of items waiting in the write queue. */
  setQueueDepth(depth: number): void;
  /** Sets the gauge of memory held by recording chunks between reading and committing. */
  setRecordingBytesInFlight(bytes: number): void;
  render(): string;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Creates an empty set of metrics. */
export function createMetrics(): Metrics {
  const requests = new Map<string, number>();
  const rateLimited = { project: 0, ip: 0 };
  const buckets = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  let accepted = 0;
  let rejected = 0;
  let deduplicated = 0;
  let chunks = 0;
  let botsDropped = 0;
  let botsFlagged = 0;
  let commits = 0;
  let commitSeconds = 0;
  let committedItems = 0;
  let queueDepth = 0;
  let recordingBytes = 0;

  return {
    request(route, status) {
      const key = `route="${route}",status="${status}"`;
      requests.set(key, (requests.get(key) ?? 0) + 1);
    },
    eventsAccepted: (n) => void (accepted += n),
    eventsRejected: (n) => void (rejected += n),
    eventsDeduplicated: (n) => void (deduplicated += n),
    chunksStored: (n) => void (chunks += n),
    botEventsDropped: (n) => void (botsDropped += n),
    botEventsFlagged: (n) => void (botsFlagged += n),
    commit(seconds, items) {
      commits++;
      commitSeconds += seconds;
      committedItems += items;
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (seconds <= (LATENCY_BUCKETS[i] ?? 0)) buckets[i] = (buckets[i] ?? 0) + 1;
    },
    rateLimited: (scope) => void rateLimited[scope]++,
    setQueueDepth: (depth) => void (queueDepth = depth),
    setRecordingBytesInFlight: (bytes) => void (recordingBytes = bytes),
    render() {
      const lines: string[] = [
        '# HELP sa_http_requests_total HTTP requests answered, by route and status.',
        '# TYPE sa_http_requests_total counter',
      ];
      for (const [labels, n] of requests) lines.push(`sa_http_requests_total{${labels}} ${n}`);
      lines.push(
        '# HELP sa_events_accepted_total Events stored.',
        '# TYPE sa_events_accepted_total counter',
        `sa_events_accepted_total ${accepted}`,
        '# HELP sa_events_rejected_total Events refused by validation.',
        '# TYPE sa_events_rejected_total counter',
        `sa_events_rejected_total ${rejected}`,
        '# HELP sa_events_deduplicated_total Events acknowledged that were already stored.',
        '# TYPE sa_events_deduplicated_total counter',
        `sa_events_deduplicated_total ${deduplicated}`,
        '# HELP sa_events_bot_dropped_total Bot events acknowledged and not stored (project policy drop).',
        '# TYPE sa_events_bot_dropped_total counter',
        `sa_events_bot_dropped_total ${botsDropped}`,
        '# HELP sa_events_bot_flagged_total Bot events stored with is_bot set (project policy flag).',
        '# TYPE sa_events_bot_flagged_total counter',
        `sa_events_bot_flagged_total ${botsFlagged}`,
        '# HELP sa_recording_chunks_total Recording chunks stored.',
        '# TYPE sa_recording_chunks_total counter',
        `sa_recording_chunks_total ${chunks}`,
        '# HELP sa_rate_limited_total Requests refused by rate limiting.',
        '# TYPE sa_rate_limited_total counter',
        `sa_rate_limited_total{scope="project"} ${rateLimited.project}`,
        `sa_rate_limited_total{scope="ip"} ${rateLimited.ip}`,
        '# HELP sa_write_queue_depth Items waiting for the next group commit.',
        '# TYPE sa_write_queue_depth gauge',
        `sa_write_queue_depth ${queueDepth}`,
        '# HELP sa_recording_bytes_in_flight Memory held by recording chunks between reading and committing.',
        '# TYPE sa_recording_bytes_in_flight gauge',
        `sa_recording_bytes_in_flight ${recordingBytes}`,
        '# HELP sa_commit_items_total Items written by group commits.',
        '# TYPE sa_commit_items_total counter',
        `sa_commit_items_total ${committedItems}`,
        '# HELP sa_write_latency_seconds Duration of group commits.',
        '# TYPE sa_write_latency_seconds histogram',
      );
      LATENCY_BUCKETS.forEach((le, i) => lines.push(`sa_write_latency_seconds_bucket{le="${le}"} ${buckets[i]}`));
      lines.push(
        `sa_write_latency_seconds_bucket{le="+Inf"} ${commits}`,
        `sa_write_latency_seconds_sum ${commitSeconds}`,
        `sa_write_latency_seconds_count ${commits}`,
      );
      return `${lines.join('\n')}\n`;
    },
  };
}
