/**
 * The console and network capture of one recording run (README "Session recording": console and
 * network), a lazily loaded chunk of its own that the recorder's engine loads beside rrweb only
 * when `console` or `network` is on.
 *
 * The wrappers (`console-capture.ts`, `fetch-capture.ts`, `xhr-capture.ts`, `beacon-capture.ts`)
 * only note calls and requests; this queue turns them into recorded events (rrweb custom events,
 * `protocol/replay-entries.ts`) when the page is idle (`requestIdleCallback`, else a timer), or at
 * once when the engine hands its buffer over (`drain()`: page hidden, pause, stop). Formatting,
 * URL redaction and masking happen there, never inside the page's call.
 */
import { CONSOLE_ENTRY_TAG, NETWORK_ENTRY_TAG } from '../../../protocol/replay-entries.js';
import type { RecordedEvent } from '../../../protocol/wire-types.js';
import type { Timers } from '../../../protocol/worker/timers.js';
import type { Logger } from '../../logger.js';
import type { MaskedValues } from '../masked-values.js';
import { maskText } from '../privacy.js';
import type { ConsoleCaptureOptions, NetworkCaptureOptions } from '../recording-config.js';
import { wrapBeacon } from './beacon-capture.js';
import { type RawConsoleCall, startConsoleCapture } from './console-capture.js';
import { type EntryMasking, consoleEntry } from './console-entry.js';
import { resolveConsoleOptions, resolveNetworkOptions } from './context-options.js';
import { wrapFetch } from './fetch-capture.js';
import { networkEntry } from './network-entry.js';
import type { RawRequest, RequestHooks } from './network-request.js';
import { absoluteUrl, allowListTest, ownUploadTest } from './network-url.js';
import { createRateCap } from './rate-cap.js';
import { wrapXhr } from './xhr-capture.js';

/** rrweb's `EventType.Custom`. */
const CUSTOM_EVENT = 5;
/** Longest wait for an idle moment before the queue is drained anyway (ms). */
const IDLE_TIMEOUT_MS = 1000;
/** Where `requestIdleCallback` is missing, the queue is drained after this (ms). */
const FALLBACK_DELAY_MS = 200;

/** What a page context runs with. */
export interface PageContextSettings {
  win: Window;
  now: () => number;
  timers: Timers;
  log: Logger;
  console: boolean | ConsoleCaptureOptions;
  network: boolean | NetworkCaptureOptions;
  /** Mask every console message whole (the recording's `maskAllText`). */
  maskAllText: boolean;
  /** The values the recording's masking hid. */
  masked: MaskedValues;
  /** Notes the values of the page's masked inputs now (read when console entries are formatted). */
  noteMaskedInputs(): void;
  /** The client's endpoint (absolute): its uploads are never recorded. */
  endpoint: string;
  /** Takes each entry's recorded event. */
  emit(event: RecordedEvent): void;
}

/** A running page context. */
export interface PageContext {
  /** Turns everything noted so far into recorded events, now. */
  drain(): void;
  /** Drains, then takes every wrapper out; nothing is noted after. */
  stop(): void;
}

type IdleWindow = Window & { requestIdleCallback?: (cb: () => void, options?: { timeout: number }) => number; cancelIdleCallback?: (id: number) => void };

/** Starts console and network capture as `settings` say. */
export function startPageContext(settings: PageContextSettings): PageContext {
  const { win, now, timers, log, masked } = settings;
  const consoleOptions = resolveConsoleOptions(settings.console);
  const networkOptions = resolveNetworkOptions(settings.network);
  let calls: RawConsoleCall[] = [];
  let requests: RawRequest[] = [];
  let scheduled = false;
  let idleId: number | undefined;
  let timer: unknown;
  let busy = false;
  let active = true;
  const removers: Array<() => void> = [];
  const idle = win as IdleWindow;
  const perf = win.performance;
  const perfNow = (): number => perf.now();
  const base = (): string => win.location?.href ?? '';

  const masking: EntryMasking = {
    message: (text) => (settings.maskAllText ? maskText(text) : masked.redact(text)),
    stack: (text) => masked.redact(text),
  };

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    if (typeof idle.requestIdleCallback === 'function') idleId = idle.requestIdleCallback(drain, { timeout: IDLE_TIMEOUT_MS });
    else timer = timers.setTimeout(drain, FALLBACK_DELAY_MS);
  }

  function drain(): void {
    if (scheduled) {
      if (idleId !== undefined) idle.cancelIdleCallback?.(idleId);
      if (timer !== undefined) timers.clearTimeout(timer);
    }
    scheduled = false;
    idleId = undefined;
    timer = undefined;
    if (calls.length === 0 && requests.length === 0) return;
    busy = true;
    try {
      const takenCalls = calls;
      const takenRequests = requests;
      calls = [];
      requests = [];
      // Values typed into masked fields so far, so that a message or body holding one is masked.
      if (!settings.maskAllText || takenRequests.length > 0) settings.noteMaskedInputs();
      for (const call of takenCalls) {
        const payload = consoleEntry(call, consoleOptions!.maxEntryLength, masking);
        settings.emit({ type: CUSTOM_EVENT, data: { tag: CONSOLE_ENTRY_TAG, payload }, timestamp: call.at });
      }
      if (takenRequests.length > 0) {
        // Read once per drain: the page's address, and the browser's resource timings by URL.
        const pageUrl = base();
        const timings = resourceTimings(takenRequests);
        for (const request of takenRequests) {
          const parsed = absoluteUrl(request.url, pageUrl);
          const timing = timingOf(request, parsed, timings);
          const payload = networkEntry(request, { base: pageUrl, options: networkOptions!, mask: masked.redact, timing, parsed });
          settings.emit({ type: CUSTOM_EVENT, data: { tag: NETWORK_ENTRY_TAG, payload }, timestamp: request.at });
        }
      }
    } catch (error) {
      log.error('the recorder could not record console or network entries', error);
    } finally {
      busy = false;
    }
  }

  /**
   * The browser's resource timings by URL, read in one call for every request of a drain (a lookup
   * by name per request scanned the whole timing buffer each time); undefined without requests
   * that have them, or without the API.
   */
  function resourceTimings(taken: readonly RawRequest[]): Map<string, PerformanceResourceTiming[]> | undefined {
    if (!taken.some((request) => request.initiator !== 'beacon') || typeof perf.getEntriesByType !== 'function') return undefined;
    const byName = new Map<string, PerformanceResourceTiming[]>();
    for (const entry of perf.getEntriesByType('resource') as PerformanceResourceTiming[]) {
      const list = byName.get(entry.name);
      if (list === undefined) byName.set(entry.name, [entry]);
      else list.push(entry);
    }
    return byName;
  }

  /** The browser's resource timing of `request` (its URL `parsed`): the entry for its URL that started closest after it. */
  function timingOf(request: RawRequest, parsed: URL | null, timings: Map<string, PerformanceResourceTiming[]> | undefined): PerformanceResourceTiming | undefined {
    if (request.initiator === 'beacon' || timings === undefined || parsed === null) return undefined;
    let best: PerformanceResourceTiming | undefined;
    for (const entry of timings.get(parsed.href) ?? []) {
      if (entry.startTime < request.t0 - 1 || entry.startTime > request.t1) continue;
      if (best === undefined || entry.startTime < best.startTime) best = entry;
    }
    return best;
  }

  if (consoleOptions !== null) {
    removers.push(
      startConsoleCapture(consoleOptions, {
        win,
        now,
        busy: () => busy,
        push(call) {
          calls.push(call);
          schedule();
        },
      }),
    );
  }

  if (networkOptions !== null) {
    const own = ownUploadTest(settings.endpoint);
    const allowed = allowListTest(networkOptions.allowUrls);
    const mayAllow = (networkOptions.recordHeaders || networkOptions.recordBodies) && networkOptions.allowUrls.length > 0;
    const cap = createRateCap(networkOptions.maxEntriesPerSecond, now);
    const hooks: RequestHooks = {
      recordHeaders: networkOptions.recordHeaders,
      recordBodies: networkOptions.recordBodies,
      maxBodyLength: networkOptions.maxBodyLength,
      perfNow,
      begin(initiator, method, url) {
        if (!active || own(url)) return null;
        // One read of the clock for the cap and the entry's time.
        const at = now();
        if (!cap.take(at)) return null;
        // Resolving the URL costs a parse: only when headers or bodies may be recorded at all.
        const isAllowed = mayAllow && allowed(absoluteUrl(url, base())?.href ?? url);
        const t0 = perfNow();
        return { initiator, method: String(method), url, at, t0, t1: t0, status: 0, allowed: isAllowed };
      },
      done(request) {
        if (!active) return;
        requests.push(request);
        schedule();
      },
    };
    removers.push(wrapFetch(win, hooks), wrapXhr(win, hooks), wrapBeacon(win, hooks));
  }

  return {
    drain,
    stop() {
      drain();
      active = false;
      for (const remove of removers.splice(0)) {
        try {
          remove();
        } catch (error) {
          log.error('the recorder could not take a console or network wrapper out', error);
        }
      }
    },
  };
}
