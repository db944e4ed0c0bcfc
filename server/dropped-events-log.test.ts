import { describe, expect, it } from 'vitest';
import { createDroppedEventsLog } from './dropped-events-log.js';
import type { LogFields } from './logger.js';

describe('createDroppedEventsLog(options).dropped(projectId, count, reason)', () => {
  it('writes one info line per project a minute at most, with the count since the last line', () => {
    const lines: Array<[string, LogFields | undefined]> = [];
    const logger = { debug() {}, warn() {}, error() {}, info: (message: string, fields?: LogFields) => void lines.push([message, fields]) };
    let now = 1_000_000;
    const log = createDroppedEventsLog({ logger, now: () => now });
    log.dropped('p1', 21, 'bots: drop');
    log.dropped('p1', 5, 'bots: drop');
    log.dropped('p2', 1, 'bots: drop');
    now += 59_999;
    log.dropped('p1', 4, 'bots: drop');
    now += 1;
    log.dropped('p1', 10, 'bots: drop');
    expect(lines).toEqual([
      ['events dropped by the project policy', { projectId: 'p1', reason: 'bots: drop', events: 21, sinceMs: 0 }],
      ['events dropped by the project policy', { projectId: 'p2', reason: 'bots: drop', events: 1, sinceMs: 0 }],
      ['events dropped by the project policy', { projectId: 'p1', reason: 'bots: drop', events: 19, sinceMs: 60_000 }],
    ]);
  });
});
