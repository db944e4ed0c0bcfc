/**
 * The session recorder's public configuration (README "Session recording"): the `recording`
 * config and what `startRecording()` takes. Types only, and a leaf: the client's configuration
 * (`config.ts`) imports it, and nothing here imports back.
 */
import type { ConsoleLevel } from '../../protocol/replay-entries.js';

/** The sampling options of {@link RecordingConfig}. */
export interface RecordingSampling {
  /** `false` records no mouse movement; a number is the sampling interval in ms. @default 50 */
  mousemove?: boolean | number;
  /** `false` records no clicks, focus and the like; a map turns single kinds (e.g. `{ MouseUp: false }`) off. @default true */
  mouseInteraction?: boolean | Record<string, boolean | undefined>;
  /** Sampling interval of scroll positions in ms. @default 150 */
  scroll?: number;
  /** `last` records only an input's final value of a burst of typing; `all` every keystroke. @default 'last' */
  input?: 'last' | 'all';
}

/** How the session is recorded (README "Session recording"). Every field is optional. */
export interface RecordingConfig {
  /**
   * Recording time (ms) after which recording stops by itself, with the final upload (as `stop()`).
   * Paused time does not count; a stop starts the count again.
   * @default 1800000 (30 minutes)
   */
  maxDuration?: number;
  /** Interval of full DOM snapshots (ms), so a replay can start near any point. @default 300000 (5 minutes) */
  checkoutEveryNms?: number;
  /** Elements with this class are not recorded at all (a placeholder of their size is). @default 'sa-block' */
  blockClass?: string;
  /** Input events of elements with this class are not recorded. @default 'sa-ignore' */
  ignoreClass?: string;
  /**
   * Mask the value of every input, textarea and select. Password and hidden inputs (also after
   * their `type` is changed), inputs whose `autocomplete` names a password, one-time code or card
   * number, and inputs with `maskTextClass` are masked whatever this says.
   * @default true
   */
  maskAllInputs?: boolean;
  /**
   * Text of elements with this class, and of their descendants, is masked (also under
   * `unmaskClass`). Text in editable regions (`contenteditable`, `designMode` documents) is masked
   * whatever the configuration.
   * @default 'sa-mask'
   */
  maskTextClass?: string;
  /**
   * Mask the text of the whole page (each character other than whitespace recorded as `*`),
   * except under `unmaskClass`. Element attributes (`title`, `alt`, `placeholder`, …) are not text
   * and are recorded as they are.
   * @default false
   */
  maskAllText?: boolean;
  /**
   * With `maskAllText`, text of elements with this class, and of their descendants, is recorded as
   * it is: for parts of the page known to hold nothing personal. Text in editable regions and
   * under `maskTextClass` stays masked under it, and input values follow `maskAllInputs` as
   * everywhere. Without `maskAllText` it does nothing.
   * @default 'sa-unmask'
   */
  unmaskClass?: string;
  /** Inline the page's stylesheets into snapshots, so a replay looks right after they change. @default true */
  inlineStylesheet?: boolean;
  /** Record the web fonts the page loads. @default false */
  collectFonts?: boolean;
  /** What is sampled and how often. @default see {@link RecordingSampling} */
  sampling?: RecordingSampling;
  /**
   * Most DOM mutations (nodes added and removed, attributes and texts changed) recorded per second.
   * Above it recording stops, with a debug message, rather than slowing a page that rebuilds
   * itself in a loop.
   * @default 10000
   */
  maxMutationsPerSecond?: number;
  /**
   * Record the page's console calls beside the replay (README "Session recording": console and
   * network). `true` takes every default of {@link ConsoleCaptureOptions}.
   * @default false
   */
  console?: boolean | ConsoleCaptureOptions;
  /**
   * Record the page's `fetch`, `XMLHttpRequest` and `sendBeacon` requests beside the replay: method,
   * URL (query values redacted), status, timing and sizes. Headers and bodies only as
   * {@link NetworkCaptureOptions} allows. The client's own requests are never recorded.
   * @default false
   */
  network?: boolean | NetworkCaptureOptions;
  /**
   * Record what `<canvas>` elements show, as images taken at most `canvasFps` times a second
   * (WebP; PNG where the browser cannot encode WebP), only when a canvas changed. Pixels are
   * not text: the masking options do not apply to them, so a canvas that may show something
   * personal needs `blockClass`. Taking the images needs a worker started from a `blob:` URL: on
   * a page whose Content-Security-Policy does not allow `worker-src blob:` no canvas image is
   * recorded (the rest of the recording goes on). README "Session recording", canvas.
   * @default false
   */
  recordCanvas?: boolean;
  /**
   * With `recordCanvas`, the most images of each canvas per second (a fraction is fine: `0.5` is
   * one image every two seconds). Not a positive number: the default; more than 10: 10.
   * @default 2
   */
  canvasFps?: number;
}

/** How console calls are recorded ({@link RecordingConfig.console}). */
export interface ConsoleCaptureOptions {
  /** The console methods recorded (`assert` only when its assertion fails). @default ['log', 'info', 'warn', 'error', 'assert'] */
  levels?: ConsoleLevel[];
  /** Most entries recorded per second; the rest are counted and the count recorded with the next entry. @default 50 */
  maxEntriesPerSecond?: number;
  /** Longest message, and longest stack, recorded (characters); longer ones are cut. @default 2000 */
  maxEntryLength?: number;
  /** Also record errors and promise rejections that nothing handled, as level `error`. @default true */
  uncaught?: boolean;
}

/**
 * How requests are recorded ({@link RecordingConfig.network}). Headers and bodies are recorded
 * only for URLs in `allowUrls`, only when `recordHeaders` / `recordBodies` say so, and headers that
 * carry credentials (`authorization`, `cookie`, `set-cookie`, and any name that speaks of a token,
 * key, secret, session, password or CSRF) never: their value is recorded as `[denied]`.
 */
export interface NetworkCaptureOptions {
  /** Query parameters whose values are recorded; every other value is recorded as `[redacted]`. @default [] */
  allowQueryParams?: string[];
  /**
   * URLs whose headers and bodies may be recorded: a string is a prefix of the absolute URL (e.g.
   * `'https://api.example.com/search'`), a RegExp is tested against it.
   * @default []
   */
  allowUrls?: Array<string | RegExp>;
  /** Record the request and response headers of `allowUrls`. @default false */
  recordHeaders?: boolean;
  /** Record the request and response bodies of `allowUrls` (text only, masked, cut at `maxBodyLength`). @default false */
  recordBodies?: boolean;
  /** More header names never recorded, besides the fixed list (which cannot be lifted). @default [] */
  denyHeaders?: string[];
  /** Longest body recorded (characters). @default 10000 */
  maxBodyLength?: number;
  /** Most requests recorded per second; the rest are not recorded. @default 500 */
  maxEntriesPerSecond?: number;
}

/** What `startRecording()` takes: console, network and canvas capture for the recording it starts. */
export type RecordingStartOptions = Pick<RecordingConfig, 'console' | 'network' | 'recordCanvas' | 'canvasFps'>;
