/**
 * The version of the protocol between the facade and a worker build: the messages of
 * `protocol/worker/worker-contract.ts` and the event columns of `event-model/event-columns.ts`. A value both sides
 * import at runtime, so it lives here rather than in the worker's module of types. The facade
 * refuses a worker of another version at the handshake (a stale `worker.js` beside a new library).
 *
 * 4: event ids posted as numbers, in columns.
 * 5: the event context carries super properties and groups (`properties`) and `webdriver`, which
 *    the worker's mapping flattens; a version-4 worker would drop them.
 * 6: the config's `deferredUnload` and the `deferred-arm` / `deferred-disarm` posts of a body for
 *    the facade's deferred request (`fetchLater`); a version-5 worker would never post one.
 * 7: `dropped` on `event-columns`: a task's events above maxQueueSize are not posted, only their
 *    ids' numbers; a version-6 worker would never report them to `onDiscard`.
 * 8: an event's number is its id's counter: posts carry no `seq`, a replay is not renumbered,
 *    `flush(upTo)` names the last event, and a status carries no queue size (the facade computes
 *    it); the `events` post of event objects is gone.
 */
export const WORKER_PROTOCOL_VERSION = 8;
