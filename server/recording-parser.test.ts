import { afterEach, describe, expect, it } from 'vitest';
import { type RecordingParser, createRecordingParser } from './recording-parser.js';

const T = Date.UTC(2026, 10, 22, 10);
const window = { offsetMs: 0, earliest: Date.UTC(2000, 0, 1), latest: T + 86_400_000 };
const chunk = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ events: [{ type: 3, data: { i: 1 }, timestamp: T }, { type: 3, data: null, timestamp: T + 5, delay: 2 }], duration: 1.5, event_offset: 7, ...extra });

describe('createRecordingParser()', () => {
  let parser: RecordingParser | undefined;
  afterEach(async () => {
    await parser?.close();
    parser = undefined;
  });

  it('parses a chunk on its thread and hands back the events as JSON text with their metadata', async () => {
    parser = createRecordingParser();
    const outcome = await parser.parse(chunk({ start_url: 'https://a.test/', user_id: 'u1', is_final: true }), window);
    expect(outcome).toEqual({
      ok: true,
      chunk: {
        eventsJson: JSON.stringify([{ type: 3, data: { i: 1 }, timestamp: T }, { type: 3, data: null, timestamp: T + 5, delay: 2 }]),
        eventCount: 2,
        duration: 1.5,
        startUrl: 'https://a.test/',
        userId: 'u1',
        isFinal: true,
        eventOffset: 7,
      },
    });
  });

  it('shifts every timestamp by the skew correction', async () => {
    parser = createRecordingParser();
    const outcome = await parser.parse(chunk(), { ...window, offsetMs: 3_600_000 });
    expect(outcome.ok && JSON.parse(outcome.chunk.eventsJson).map((e: { timestamp: number }) => e.timestamp)).toEqual([T + 3_600_000, T + 3_600_005]);
  });

  it('refuses bad JSON, a bad chunk naming the field, and a time outside the window', async () => {
    parser = createRecordingParser();
    expect(await parser.parse('{"events":', window)).toEqual({ ok: false, code: 'INVALID_JSON', error: 'The body is not valid JSON.' });
    expect(await parser.parse(chunk({ event_offset: -1 }), window)).toMatchObject({ ok: false, code: 'VALIDATION_ERROR', error: expect.stringMatching(/^event_offset:/) });
    expect(await parser.parse('{"events":[{"type":3,"data":{"x":1e999},"timestamp":1}],"duration":0,"event_offset":0}', window)).toMatchObject({
      ok: false,
      code: 'VALIDATION_ERROR',
      error: 'events.0.data: a number is not finite',
    });
    expect(await parser.parse(chunk(), { ...window, latest: T })).toMatchObject({
      ok: false,
      code: 'VALIDATION_ERROR',
      error: expect.stringMatching(/^events\.1\.timestamp: .* outside the accepted time range/),
    });
  });

  it('refuses with 413 a chunk too complex for its heap, and parses the chunks queued behind it on a new thread', async () => {
    parser = createRecordingParser({ heapMb: 64 });
    const huge = `{"events":[{"type":3,"data":[${'{},'.repeat(3_000_000)}{}],"timestamp":${T}}],"duration":0,"event_offset":0}`;
    const [tooBig, next] = await Promise.all([parser.parse(huge, window), parser.parse(chunk(), window)]);
    expect(tooBig).toMatchObject({ ok: false, code: 'PAYLOAD_TOO_LARGE' });
    expect(next).toMatchObject({ ok: true, chunk: { eventCount: 2 } });
  });
});
