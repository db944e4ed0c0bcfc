/**
 * RecordingConfig with its defaults applied, and the options rrweb's `record()` is given for it.
 * Every field of RecordingConfig reaches rrweb (or the engine: `maxDuration`,
 * `maxMutationsPerSecond`); `maskAllInputs` is explicit, never rrweb's own default, and the text
 * of editable regions is masked whatever the configuration (privacy.ts).
 */
import type { RecordedEvent } from '../../protocol/wire-types.js';
import type { MaskedValues } from './masked-values.js';
import { createInputMasking, createTextMasking } from './privacy.js';
import type { ConsoleCaptureOptions, NetworkCaptureOptions, RecordingConfig, RecordingSampling } from './recording-config.js';
import type { CaptureOptions } from './types.js';

/**
 * RecordingConfig with every default applied. `console` and `network` are kept as given (false
 * when absent): their own options are resolved by the capture that loads only when they are on
 * (`context/context-options.ts`).
 */
export interface ResolvedRecordingConfig extends Required<Omit<RecordingConfig, 'sampling' | 'console' | 'network'>> {
  sampling: Required<RecordingSampling>;
  console: boolean | ConsoleCaptureOptions;
  network: boolean | NetworkCaptureOptions;
}

/** Every default of {@link RecordingConfig}, in one place. */
export const RECORDING_DEFAULTS: ResolvedRecordingConfig = {
  maxDuration: 30 * 60 * 1000,
  checkoutEveryNms: 5 * 60 * 1000,
  blockClass: 'sa-block',
  ignoreClass: 'sa-ignore',
  maskAllInputs: true,
  maskTextClass: 'sa-mask',
  maskAllText: false,
  unmaskClass: 'sa-unmask',
  inlineStylesheet: true,
  collectFonts: false,
  sampling: { mousemove: 50, mouseInteraction: true, scroll: 150, input: 'last' },
  maxMutationsPerSecond: 10_000,
  console: false,
  network: false,
  recordCanvas: false,
  canvasFps: 2,
};

/** The most canvas images per second `canvasFps` can ask for: each is an encode and a few KB to upload. */
export const CANVAS_FPS_MAX = 10;

/**
 * How canvas images are encoded: WebP at this quality (the browser encodes PNG where it cannot
 * encode WebP); a screen's worth is tens of KB rather than hundreds as PNG.
 */
export const CANVAS_IMAGE = { type: 'image/webp', quality: 0.6 } as const;

/**
 * Applies the defaults. A value of the wrong type (or a number that is not positive) falls back to
 * its default, as `resolveConfig` does for AnalyticsConfig.
 */
export function resolveRecordingConfig(config: RecordingConfig | undefined): ResolvedRecordingConfig {
  const given = (config ?? {}) as Record<string, unknown>;
  const sampling = (typeof given.sampling === 'object' && given.sampling !== null ? given.sampling : {}) as Record<string, unknown>;
  const pick = <T>(source: Record<string, unknown>, key: string, fallback: T, ok: (value: unknown) => boolean): T =>
    ok(source[key]) ? (source[key] as T) : fallback;
  const positive = (value: unknown): boolean => typeof value === 'number' && value > 0 && Number.isFinite(value);
  const string = (value: unknown): boolean => typeof value === 'string';
  const boolean = (value: unknown): boolean => typeof value === 'boolean';
  const captureChoice = (value: unknown): boolean => boolean(value) || (typeof value === 'object' && value !== null && !Array.isArray(value));
  const d = RECORDING_DEFAULTS;
  return {
    maxDuration: pick(given, 'maxDuration', d.maxDuration, positive),
    checkoutEveryNms: pick(given, 'checkoutEveryNms', d.checkoutEveryNms, positive),
    blockClass: pick(given, 'blockClass', d.blockClass, string),
    ignoreClass: pick(given, 'ignoreClass', d.ignoreClass, string),
    maskAllInputs: pick(given, 'maskAllInputs', d.maskAllInputs, boolean),
    maskTextClass: pick(given, 'maskTextClass', d.maskTextClass, string),
    maskAllText: pick(given, 'maskAllText', d.maskAllText, boolean),
    unmaskClass: pick(given, 'unmaskClass', d.unmaskClass, string),
    inlineStylesheet: pick(given, 'inlineStylesheet', d.inlineStylesheet, boolean),
    collectFonts: pick(given, 'collectFonts', d.collectFonts, boolean),
    maxMutationsPerSecond: pick(given, 'maxMutationsPerSecond', d.maxMutationsPerSecond, positive),
    console: pick(given, 'console', d.console, captureChoice),
    network: pick(given, 'network', d.network, captureChoice),
    recordCanvas: pick(given, 'recordCanvas', d.recordCanvas, boolean),
    canvasFps: Math.min(CANVAS_FPS_MAX, pick(given, 'canvasFps', d.canvasFps, positive)),
    sampling: {
      mousemove: pick(sampling, 'mousemove', d.sampling.mousemove, (v) => boolean(v) || positive(v)),
      mouseInteraction: pick(sampling, 'mouseInteraction', d.sampling.mouseInteraction, (v) => boolean(v) || (typeof v === 'object' && v !== null)),
      scroll: pick(sampling, 'scroll', d.sampling.scroll, positive),
      input: pick(sampling, 'input', d.sampling.input, (v) => v === 'last' || v === 'all'),
    },
  };
}

/**
 * The options of rrweb's `record()` for `config`, with `emit` and `onError` as the funnels. With
 * `masked`, every value the masking hides is noted there (console and network capture redact it).
 */
export function captureOptions(
  config: ResolvedRecordingConfig,
  emit: (event: RecordedEvent) => void,
  onError: (error: unknown) => void,
  masked?: MaskedValues,
): CaptureOptions {
  const masking = createInputMasking(config.maskAllInputs, config.maskTextClass);
  const text = createTextMasking(config);
  if (masked !== undefined) {
    const { maskInputFn } = masking;
    masking.maskInputFn = (value, element) => noted(masked, value, maskInputFn(value, element));
    // With maskAllText every text is masked, and so is every console message: nothing to note.
    const { maskTextFn } = text;
    if (!config.maskAllText) text.maskTextFn = (value, element) => noted(masked, value, maskTextFn(value, element));
  }
  return {
    emit,
    checkoutEveryNms: config.checkoutEveryNms,
    blockClass: config.blockClass,
    ignoreClass: config.ignoreClass,
    maskTextClass: config.maskTextClass,
    // Every text reaches maskTextFn, which decides (editable regions, maskAllText: privacy.ts).
    maskTextSelector: text.maskTextSelector,
    maskTextFn: text.maskTextFn,
    // `maskAllInputs` itself is not passed: rrweb would then ignore maskInputOptions (privacy.ts).
    maskInputOptions: masking.maskInputOptions,
    maskInputFn: masking.maskInputFn,
    inlineStylesheet: config.inlineStylesheet,
    collectFonts: config.collectFonts,
    // Explicit either way: off unless asked for, and then at most canvasFps images a second (rrweb's
    // other mode, every drawing call, would cost the page a record per call).
    recordCanvas: config.recordCanvas,
    sampling: config.recordCanvas ? { ...config.sampling, canvas: config.canvasFps } : { ...config.sampling },
    ...(config.recordCanvas ? { dataURLOptions: { ...CANVAS_IMAGE } } : {}),
    errorHandler(error) {
      onError(error);
      return true;
    },
  };
}

/** Notes `value` when the masking changed it; returns what the masking made of it. */
function noted(masked: MaskedValues, value: string, out: string): string {
  if (out !== value) masked.note(value);
  return out;
}
