/**
 * `createAnalytics()`: wires identity, session, context, the delivery client and the operations.
 * Every event goes through one funnel (`emit`) that stamps id, time and session
 * (docs/architecture.md, "Conventions"). It runs on the page's main thread for every event, so its
 * per-event work is a counter, a few compares and a few array pushes, with no event object made
 * (its cost per call is measured in bench/RESULTS.md, "Client main thread").
 */
import type { AnalyticsEventType, EventContext, EventProperties } from '../protocol/event-model/analytics-event.js';
import type { Analytics } from './analytics.js';
import { type AnalyticsConfig, resolveConfig } from './config.js';
import { createBusinessOperations } from './business/business-operations.js';
import { AnalyticsError } from './errors.js';
import { createExperimentOperations } from './experiments/experiment-operations.js';
import { guardAll } from './guard.js';
import { type SyncOperations, fallbackOf } from './operation-fallbacks.js';
import { createIdentity } from './session/identity.js';
import { createLogger } from './logger.js';
import { createPageContext } from './session/page-context.js';
import { watchNavigation } from './auto/page-tracking.js';
import { cleanProperties } from '../protocol/event-model/properties.js';
import { createFacadeRecorder } from './recorder/facade-recorder.js';
import type { RecordingStartOptions } from './recorder/recording-config.js';
import { createSessionManager } from './session/session.js';
import { createSessionState } from './session/session-state.js';
import { browserLocalStorage, createSafeStorage } from './session/storage.js';
import { consentKey, forgetStored, initialConsent } from './privacy/consent.js';
import { createSuperProperties } from './privacy/super-properties.js';
import { runBeforeSend } from './privacy/before-send.js';
import { inSample } from './privacy/sampling.js';
import { startUnloadPath } from './unload/unload-path.js';
import { createUuidV7Clock, createUuidV7Generator } from './delivery/uuid-v7.js';
import { type DeliveryClient, createDeliveryClient } from './delivery/delivery-client.js';
import { deliveryOptions, globalTimers } from './delivery/delivery-options.js';
import { whenIdle } from './when-idle.js';

/**
 * Creates an analytics client. Capture starts at once; the delivery core starts in a Web Worker
 * (or in-process where none can run). Outside a browser (server rendering) the client works but
 * sends nothing and starts no timers or listeners. Never throws.
 */
export function createAnalytics(config: AnalyticsConfig): Analytics {
  const win = typeof window !== 'undefined' && typeof document !== 'undefined' ? window : undefined;
  try {
    return build(config, win);
  } catch (error) {
    // Something in this browser is stranger than expected: a client without browser features
    // still serves every operation.
    createLogger(config?.debug === true).error('createAnalytics() failed in this environment; events will not be sent', error);
    return build(config, undefined);
  }
}

function build(input: AnalyticsConfig, win: Window | undefined): Analytics {
  const config = resolveConfig(input ?? ({} as AnalyticsConfig), win?.location.href);
  const transport = config.transport ?? {};
  const log = createLogger(config.debug);
  if (config.apiKey === '' || config.projectId === '') log.warn('apiKey and projectId are required; the server will refuse events');

  const now = transport.now ?? (() => Date.now());
  // One clock for every id of the page: events take its numbers, the other ids its text.
  const ids = createUuidV7Clock({ randomBytes: transport.randomBytes });
  const nextId = createUuidV7Generator(ids);
  const newId = (): string => nextId(now());
  // The device's storage; none in memory mode (docs/decisions.md, "Cookieless mode").
  const device: () => Storage | undefined =
    win === undefined || config.persistence === 'memory' ? () => undefined : (transport.storage ?? browserLocalStorage);
  const keyPrefix = `service-analytics:${config.projectId}:`;
  // Only the visitor's choice is stored whatever it is; everything else waits for consent
  // (docs/decisions.md, "Consent").
  const choice = createSafeStorage(device);
  let consent = initialConsent(config.consent, config.respectDoNotTrack, choice.get(consentKey(keyPrefix)), win?.navigator);
  const store = createSafeStorage(() => (consent === 'granted' ? device() : undefined));
  const supers = createSuperProperties(store, keyPrefix);
  const identity = createIdentity({ store, keyPrefix, newId, initialUserId: config.userId });
  const pageContext = createPageContext(win, now);
  // `analytics.session`: told of every change by the session manager; no timer outside a browser.
  const sessionState = createSessionState((at) => session.data(at), now, config.sessionTimeout, win && globalTimers, log);
  const session = createSessionManager({
    store,
    key: `${keyPrefix}session`,
    timeout: config.sessionTimeout,
    newId,
    landing: () => (win === undefined ? { url: '', referrer: '' } : { url: win.location.href, referrer: win.document.referrer }),
    now: now(),
    onChange: sessionState.changed,
  });

  // Outside a browser the client keeps and sends nothing (`off`), so a server process does not
  // accumulate events or start timers.
  const delivery: DeliveryClient = createDeliveryClient({
    ...deliveryOptions(config, globalTimers, log, ids.tail, config.onDiscard),
    held: consent !== 'granted',
    off: win === undefined,
  });
  const { beforeSend, sampleRate } = config;
  // The sampling decision of the last session asked about: computed once per session, not per event.
  let sampleId = '';
  let sampleIn = true;
  const sends = (sessionId: string): boolean =>
    sampleRate >= 1 || (sessionId === sampleId ? sampleIn : ((sampleId = sessionId), (sampleIn = inSample(sessionId, sampleRate))));

  let closed = false;

  /** The funnel: every event is made here. */
  function emit(
    type: AnalyticsEventType,
    name: string | undefined,
    properties: EventProperties | undefined,
    userId?: string,
    context?: EventContext,
    at?: number,
    previousId?: string,
  ): void {
    if (closed) return log.debug(`${name ?? type}: the client was shut down; event dropped`);
    // `at`: the time of a call replayed once a lazily loaded module arrived (business-operations.ts).
    const timestamp = at ?? now();
    const sessionId = session.touch(timestamp);
    // The session's own figures count every event, sent or not (they serve the app's views).
    session.recordEvent(
      name ?? (type === 'page' ? 'page_view' : type === 'identify' ? 'user_identify' : 'user_alias'),
      type === 'page' ? 'page' : name === 'click' ? 'click' : 'other',
    );
    if (consent === 'denied' || !sends(sessionId)) return;
    let ctx = supers.withContext(context ?? pageContext.get(timestamp));
    let user = userId ?? identity.userId() ?? undefined;
    if (beforeSend !== undefined) {
      const kept = runBeforeSend(
        beforeSend,
        { type, event: name, properties, userId: user, anonymousId: identity.anonymousId(), sessionId, timestamp, context: ctx },
        log,
      );
      if (kept === null) return;
      name = kept.event ?? name;
      properties = cleanProperties(kept.properties);
      user = kept.userId;
      ctx = kept.context ?? ctx;
    }
    // Straight into the post's columns, field by field: no event object per call.
    ids.tick(timestamp);
    delivery.push(ids.ms, ids.counter, timestamp, type, name, properties, user, identity.anonymousId(), sessionId, ctx, previousId);
  }

  const send = (name: string, properties: EventProperties | undefined, at?: number): void =>
    void emit('track', name, cleanProperties(properties), undefined, undefined, at);
  const removers: Array<() => void> = [];
  // Off the page's start-up: begun once the delivery core's start is over and the page is idle
  // (docs/decisions.md, "Start-up").
  const afterStart =
    win === undefined
      ? undefined
      : (start: () => void): void => {
          let cancel: (() => void) | undefined;
          void delivery.started().then(() => {
            if (!closed) cancel = whenIdle(win, start);
          });
          removers.push(() => cancel?.());
        };
  const business = createBusinessOperations({
    send,
    store,
    keyPrefix,
    now,
    engagementScore: () => session.data(now()).engagementScore ?? 0,
    log,
    schedule: afterStart,
  });
  const experiments = createExperimentOperations(config.enableABTesting, {
    config: config.abTestConfig,
    store,
    key: `${keyPrefix}experiments`,
    unitId: () => identity.userId() ?? identity.anonymousId(),
    send,
    now,
    log,
    fetch: win === undefined ? undefined : (url, init) => fetch(url, init),
    timers: globalTimers,
  });
  const { sessionChanged: recordingSessionChanged, close: closeRecorder, ...recorder } = createFacadeRecorder(
    config,
    () => session.currentId(now()),
    {
      win,
      logger: log,
      // Recordings follow the events: nothing after optOut(), nothing of a session left out of the sample.
      sink: {
        send: (message) => void (consent !== 'denied' && (!('sessionId' in message) || sends(message.sessionId)) && delivery.send(message)),
        recordingQueued: () => delivery.recordingQueued(),
      },
      storage: store,
      userId: () => identity.userId(),
      now,
      timers: globalTimers,
    },
  );
  /** A recording asked for before consent starts at `optIn()`, with its options. */
  let wantRecording: RecordingStartOptions | false = false;
  const startRecording = (options?: RecordingStartOptions): void => {
    if (consent === 'granted') return recorder.startRecording(options);
    wantRecording = consent === 'pending' && (options ?? {});
    log.debug(`startRecording(): consent is ${consent}`);
  };

  let lastPageUrl: string | undefined;
  function page(properties?: unknown): void {
    const shared = pageContext.get();
    lastPageUrl = pageContext.href();
    // The page event carries the page as it is now (title may have changed since the URL did).
    emit('page', undefined, cleanProperties(properties), undefined, win === undefined ? shared : { ...shared, page: pageContext.page() });
  }

  if (win !== undefined) {
    removers.push(startUnloadPath(win, config, delivery, session, now, transport.sendBeacon, log));
    if (config.enableAutoPageTracking) page();
    else lastPageUrl = pageContext.href();
    const onNavigate = (): void => {
      if (closed || pageContext.href() === lastPageUrl) return;
      session.recordPageChange(now());
      if (config.enableAutoPageTracking) page();
      else lastPageUrl = pageContext.href();
    };
    // Synchronous, not in a lazy chunk: a pushState() right after start must be seen.
    removers.push(watchNavigation(win, onNavigate));
    let stopObservers: (() => void) | undefined;
    removers.push(() => stopObservers?.());
    afterStart!(() =>
      import('./auto/page-observers.js').then(
        ({ observePage }) => {
          if (!closed) stopObservers = observePage(win, { session, now, config, send, log });
        },
        (error: unknown) => log.debug('page observers could not be loaded', error),
      ),
    );
  }
  if (config.enableSessionRecording) startRecording();

  const { remember: _remember, forget: _forget, settled: _settled, ...businessOperations } = business;
  const { forget: _forgetAssignments, stop: stopExperiments, ...experimentOperations } = experiments;
  removers.push(stopExperiments, closeRecorder, sessionState.close);
  const operations: SyncOperations = {
    ...recorder,
    startRecording,
    optIn() {
      choice.set(consentKey(keyPrefix), 'granted');
      if (consent === 'granted') return;
      consent = 'granted';
      // What was kept in memory meanwhile (ids, session, super properties) is stored now.
      store.persistMemory();
      delivery.release();
      if (wantRecording) recorder.startRecording(wantRecording);
    },
    optOut() {
      choice.set(consentKey(keyPrefix), 'denied');
      wantRecording = false;
      // Chunks of this session already posted to the core are dropped there, not uploaded.
      delivery.send({ t: 'recording-clear', sessionId: session.currentId(now()) });
      consent = 'denied';
      recorder.stopRecording();
      delivery.clear().catch((error: unknown) => log.error('optOut() failed', error));
      forgetStored(device, keyPrefix);
    },
    hasOptedOut: () => consent === 'denied',
    register: (properties) => supers.register(properties),
    unregister: (key) => supers.unregister(key),
    getRegistered: () => supers.registered(),
    group(type, key, traits) {
      if (typeof type !== 'string' || type === '' || (typeof key !== 'string' && typeof key !== 'number') || key === '') {
        return log.warn('group() needs a type and a key');
      }
      supers.group(type, String(key));
      send('group_identify', { ...cleanProperties(traits), group_type: type, group_key: String(key) });
    },
    ...businessOperations,
    ...experimentOperations,
    page,
    identify(userId, traits) {
      if (typeof userId !== 'string' || userId === '') return log.warn('identify() needs a user id');
      // Another user's billing data must not stay with this one.
      if (identity.userId() !== null && identity.userId() !== userId) business.forget();
      identity.setUserId(userId);
      const properties = cleanProperties(traits);
      if (properties?.subscription === undefined) return void emit('identify', undefined, properties, userId);
      // The subscription is validated like a subscription event's (a card number is never sent),
      // by the lazily loaded module: the event is made once it has, stamped with this call's time.
      business.remember(properties.subscription, (valid, at) =>
        emit('identify', undefined, { ...properties, subscription: JSON.stringify(valid) }, userId, undefined, at),
      );
    },
    alias(newId, previousId) {
      if (typeof newId !== 'string' || newId === '') return log.warn('alias() needs the new id');
      const previous = previousId ?? identity.userId() ?? identity.anonymousId();
      identity.setUserId(newId);
      emit('alias', undefined, undefined, newId, undefined, undefined, String(previous));
    },
    reset() {
      identity.reset();
      session.restart(now());
      recordingSessionChanged();
      business.forget();
      experiments.forget();
      supers.clear();
    },
    setUserId: (userId) => identity.setUserId(userId === '' ? null : userId),
    getUserId: () => identity.userId(),
    getAnonymousId: () => identity.anonymousId(),
    getSessionId: () => session.currentId(now()),
    getSessionData: () => session.data(now()),
    getActiveSession: () => (session.currentId(now()), session.data(now())),
    calculateEngagementScore: () => session.data(now()).engagementScore ?? 0,
    getQueueSize: () => delivery.queueSize(),
    clearQueue() {
      delivery.clear().catch((error: unknown) => log.error('clearQueue() failed', error));
    },
    trackCustomError(error, properties) {
      const err = typeof error === 'object' && error !== null ? (error as Partial<Error>) : undefined;
      send('error', {
        ...cleanProperties(properties),
        message: err === undefined ? String(error) : String(err.message ?? err),
        stack: typeof err?.stack === 'string' ? err.stack : undefined,
        type: 'custom',
      });
    },
    trackPerformance: (data) => send('performance', data as EventProperties),
    trackFeatureUsage: (featureName, properties) => send('feature_used', { ...properties, feature: String(featureName) }),
  };

  const analytics: Analytics = {
    ...guardAll(operations, fallbackOf, log),
    config: Object.freeze({ ...config }),
    // Neither of its two functions throws (session-state.ts), so it is not guarded.
    session: sessionState.store,
    track(event, properties) {
      // Hand-written rather than wrapped: the hot path, one call less.
      try {
        if (typeof event !== 'string' || event === '') return log.warn('track() needs an event name');
        emit('track', event, cleanProperties(properties));
      } catch (error) {
        log.error('track() failed', error);
      }
    },
    flush() {
      if (consent !== 'granted') {
        return Promise.reject(new AnalyticsError('NO_CONSENT', `flush(): consent is ${consent}`, { queued: delivery.queueSize() }));
      }
      try {
        // Calls still waiting for a lazily loaded module are part of "everything queued now".
        return business.settled()?.then(() => delivery.flush()) ?? delivery.flush();
      } catch (error) {
        return Promise.reject(new AnalyticsError('WORKER_UNAVAILABLE', 'flush() failed', { cause: error }));
      }
    },
    getDeliveryStats() {
      try {
        return delivery.stats();
      } catch (error) {
        return Promise.reject(new AnalyticsError('WORKER_UNAVAILABLE', 'getDeliveryStats() failed', { cause: error }));
      }
    },
    async shutdown(timeoutMs = 2000) {
      if (closed) return;
      closed = true;
      // The loop of run-removers.ts, written out: imported here, that one function would be shared
      // between the facade and its lazy chunks, and the plumbing costs the facade more bytes than
      // the loop (`npm run size`).
      for (const remove of removers.splice(0)) {
        try {
          remove();
        } catch (error) {
          log.error('a listener could not be removed', error);
        }
      }
      try {
        session.persist();
        await delivery.shutdown(timeoutMs);
      } catch (error) {
        log.error('shutdown() failed', error);
      }
    },
  };
  return analytics;
}
