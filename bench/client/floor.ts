/**
 * The floor of the client benchmark, the reference our full facade is measured against
 * (bench/RESULTS.md, "Client main thread"): a main thread that builds a small event object per
 * call and posts each task's events as one array to a worker, and a worker that sends them in
 * batches of 20 (at most 4 requests at once) to our server. No ids beyond a counter, no session,
 * no acknowledgements back to the page, no retries, no beacon: what is left is the least any
 * worker-based client must do on the main thread.
 *
 * {@link FLOOR_WORKER_SILENT} is the same worker with the requests left out: the difference
 * between the two columns is what Chromium charges the page's main thread for the requests a
 * dedicated worker makes (per request, the worker's fetch context reports the load to its parent
 * frame: `blink.mojom.ResourceLoadInfoNotifier` messages handled on the page's main thread).
 */

/** The worker script, served at `/bench/floor-worker.js`. */
export const FLOOR_WORKER = `
let config;
const queue = [];
let inFlight = 0;
onmessage = (event) => {
  if (event.data.config) { config = event.data.config; return; }
  for (const e of event.data) queue.push({
    event_id: e.id,
    event_type: e.event,
    session_id: e.sessionId,
    timestamp: new Date(e.timestamp).toISOString(),
    properties: { ...e.properties, anonymous_id: e.anonymousId },
    user_agent: e.context.userAgent,
  });
  pump();
};
function pump() {
  while (inFlight < 4 && queue.length > 0) {
    const batch = queue.splice(0, 20);
    inFlight++;
    fetch(config.endpoint + '/api/v1/events/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'ApiKey ' + config.apiKey, 'x-project-id': config.projectId },
      body: JSON.stringify(batch),
    }).catch(() => undefined).finally(() => { inFlight--; pump(); });
  }
}
`;

/** {@link FLOOR_WORKER} without requests: it maps the events and drops them. */
export const FLOOR_WORKER_SILENT = FLOOR_WORKER.replace(
  /fetch\(config\.endpoint[^]*?body: JSON\.stringify\(batch\),\n    \}\)/,
  'Promise.resolve(JSON.stringify(batch))',
);
if (FLOOR_WORKER_SILENT === FLOOR_WORKER) throw new Error('floor.ts: the silent floor worker could not be derived');

/** {@link FLOOR_WORKER} answering its configuration, for the start-up measurement's "ready". */
export const FLOOR_WORKER_STARTUP = FLOOR_WORKER.replace('config = event.data.config; return;', "config = event.data.config; postMessage('ready'); return;");
if (FLOOR_WORKER_STARTUP === FLOOR_WORKER) throw new Error('floor.ts: the start-up floor worker could not be derived');

/**
 * The floor of start-up: what any worker-based client with a persistent visitor must do before it
 * takes events (read or make the visitor's id in localStorage, as SPEC's anonymous id asks, and
 * start a worker) and before it is ready (the worker answered). Calls `created()` and `ready()`.
 */
export function floorStartupScript(config: { endpoint: string; apiKey: string; projectId: string }, created: string, ready: string): string {
  // A module script, as ours is: both run once the document is parsed, after its first layout.
  return `<script type="module">
{
  let anonymousId = localStorage.getItem('floor:anonymous-id');
  if (anonymousId === null) localStorage.setItem('floor:anonymous-id', (anonymousId = crypto.randomUUID()));
  const worker = new Worker('/bench/floor-worker-startup.js');
  worker.onmessage = () => { ${ready}; };
  worker.postMessage({ config: ${JSON.stringify(config)} });
  window.track = (name) => worker.postMessage([{ id: String(Date.now()), timestamp: Date.now(), type: 'track', event: name, properties: {}, anonymousId, sessionId: anonymousId, context: {} }]);
  ${created};
}
</script>`;
}

/**
 * The page script: `track(name, properties)` on the main thread. Sets `bench.track`.
 *
 * @param workerUrl - `/bench/floor-worker.js` ({@link FLOOR_WORKER}) or the silent one
 */
export function floorPage(config: { endpoint: string; apiKey: string; projectId: string }, workerUrl = '/bench/floor-worker.js'): string {
  return `<script>
{
  const worker = new Worker(${JSON.stringify(workerUrl)});
  worker.postMessage({ config: ${JSON.stringify(config)} });
  const prefix = crypto.randomUUID().slice(0, 24);
  const anonymousId = crypto.randomUUID();
  const sessionId = crypto.randomUUID();
  const context = { userAgent: navigator.userAgent, screen: { width: screen.width, height: screen.height } };
  let counter = 0;
  let buffer = [];
  let scheduled = false;
  const post = () => {
    scheduled = false;
    const events = buffer;
    buffer = [];
    worker.postMessage(events);
  };
  const track = (name, properties) => {
    buffer.push({ id: prefix + String(counter++).padStart(12, '0'), timestamp: Date.now(), type: 'track', event: name, properties: { ...properties }, anonymousId, sessionId, context });
    if (!scheduled) {
      scheduled = true;
      queueMicrotask(post);
    }
  };
  bench.track = (name, count, run) => {
    for (let i = 0; i < count; i++) track(name, { run, i });
  };
  bench.ready = async () => 'floor';
  bench.started = true;
}
</script>`;
}
