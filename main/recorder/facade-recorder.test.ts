/**
 * The recording operations of `createAnalytics()`: bound to the client's delivery (the in-process
 * core with a fake fetch here), its session and its unload path. rrweb is replaced through the
 * module mock, since the client loads it itself.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordingUpload } from '../../protocol/recording.js';
import type { Analytics } from '../analytics.js';
import { inProcessClient } from '../../test-support/client/facade-fakes.js';
import { createFakeRrweb } from '../../test-support/client/recorder-fakes.js';
import type { RecordFunction } from './types.js';

const rrweb = vi.hoisted(() => ({ record: undefined as RecordFunction | undefined }));
vi.mock('rrweb', () => ({ record: (options: Parameters<RecordFunction>[0]) => rrweb.record?.(options) }));

let fake: ReturnType<typeof createFakeRrweb>;
const clients: Analytics[] = [];

beforeAll(async () => {
  await Promise.all([import('./engine.js'), import('./context/page-context.js'), import('../delivery/core-connection.js'), import('../delivery/delivery-link.js'), import('../../worker/delivery-core.js')]);
});
beforeEach(() => {
  localStorage.clear();
  fake = createFakeRrweb();
  rrweb.record = fake.record;
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 22, 10, 0, 0), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(async () => {
  for (const analytics of clients.splice(0)) analytics.stopRecording();
  vi.useRealTimers();
});

function client(config: Parameters<typeof inProcessClient>[0] = {}) {
  const made = inProcessClient(config);
  clients.push(made.analytics);
  const chunks = () =>
    made.server.requests
      .filter((r) => r.url.includes('/recordings'))
      .map((r) => ({ session: r.url.split('/sessions/')[1]!.split('/')[0]!, ...(r.body as RecordingUpload) }));
  return { ...made, chunks };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(0);
};

describe('createAnalytics() recording operations', () => {
  it('startRecording() records the current session and stopRecording() uploads it with is_final', async () => {
    const { analytics, chunks } = client({ userId: 'user-7' });
    analytics.startRecording();
    expect(analytics.isRecordingActive()).toBe(true);
    await settle();
    fake.emit(2);
    analytics.stopRecording();
    expect(analytics.isRecordingActive()).toBe(false);
    await settle();
    expect(chunks()).toEqual([
      expect.objectContaining({ session: analytics.getSessionId(), event_offset: 0, is_final: true, user_id: 'user-7' }),
    ]);
    expect(chunks()[0]!.events.map((e) => e.type)).toEqual([4, 2, 3, 3, 5]);
  });

  it('enableSessionRecording starts recording with the client, and `recording` configures it', async () => {
    const { analytics } = client({ enableSessionRecording: true, recording: { blockClass: 'private', maskAllInputs: false } });
    expect(analytics.isRecordingActive()).toBe(true);
    await settle();
    expect(fake.captures[0]!.options).toMatchObject({ blockClass: 'private', maskTextClass: 'sa-mask' });
  });

  it('hands buffered recorder events to the core before its page-hidden, so they are uploaded on hide', async () => {
    const { analytics, chunks } = client();
    analytics.startRecording();
    await settle();
    fake.emit(3);
    try {
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
      await settle();
      // Without waiting for the 10 s upload: the core got them ahead of page-hidden.
      expect(chunks().flatMap((c) => c.events)).toHaveLength(5);
    } finally {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
    }
  });

  it('reset() (a new session) ends the recording of the old session and goes on recording the new one', async () => {
    const { analytics, chunks } = client();
    analytics.startRecording();
    await settle();
    const before = analytics.getSessionId();
    fake.emit(1);
    analytics.reset();
    const after = analytics.getSessionId();
    expect(after).not.toBe(before);
    expect(analytics.isRecordingActive()).toBe(true);
    await settle();
    fake.emit(1);
    analytics.stopRecording();
    await settle();
    expect(chunks().map((c) => [c.session, c.event_offset, c.is_final])).toEqual([
      [before, 0, true],
      [after, 0, true],
    ]);
    // The new session's recording starts with its own full snapshot.
    expect(chunks()[1]!.events.map((e) => e.type)).toEqual([4, 2, 3, 5]);
  });

  it('startRecording() after a stop in a later session makes a new recording; in the same session it continues', async () => {
    const { analytics, chunks } = client({ sessionTimeout: 60_000 });
    analytics.startRecording();
    await settle();
    analytics.stopRecording();
    analytics.startRecording();
    await settle();
    analytics.stopRecording();
    await vi.advanceTimersByTimeAsync(120_000);
    analytics.startRecording();
    await settle();
    analytics.stopRecording();
    await settle();
    const sessions = chunks().map((c) => c.session);
    expect(sessions[0]).toBe(sessions[1]);
    expect(sessions[2]).not.toBe(sessions[0]);
    expect(chunks().map((c) => c.event_offset)).toEqual([0, 3, 0]);
  });

  it('shutdown() stops recording', async () => {
    const { analytics } = client();
    analytics.startRecording();
    await settle();
    await analytics.shutdown(0);
    expect(analytics.isRecordingActive()).toBe(false);
    expect(fake.running()).toBe(0);
  });
  it('startRecording({ console: true }) records console calls into the recording; without it, or for the next recording, none', async () => {
    const { analytics, chunks } = client();
    const consoleTags = () =>
      chunks()
        .flatMap((c) => c.events)
        .filter((e) => e.type === 5 && (e.data as { tag: string }).tag === 'service-analytics:console')
        .map((e) => (e.data as { payload: { level: string; message: string } }).payload);
    analytics.startRecording({ console: true });
    await settle();
    fake.emit(2);
    console.info('captured-line', 42);
    analytics.stopRecording();
    await settle();
    expect(consoleTags()).toEqual([{ level: 'info', message: 'captured-line 42' }]);
    // A new recording without options takes the configuration's default: off.
    analytics.startRecording();
    await settle();
    fake.emit(2);
    console.info('not-captured');
    analytics.stopRecording();
    await settle();
    expect(consoleTags().map((e) => e.message)).toEqual(['captured-line 42']);
  });
});
