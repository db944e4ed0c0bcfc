/**
 * Canvas recording's options (capture-options.ts): off by default and then said so to rrweb, on
 * with a frame-rate limit that the configuration cannot raise past its bound, and images encoded
 * as WebP. That rrweb then records a drawn canvas is proved in Chromium:
 * examples/browser-tests/recorder-canvas.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CANVAS_FPS_MAX, CANVAS_IMAGE, RECORDING_DEFAULTS, captureOptions, resolveRecordingConfig } from './capture-options.js';
import type { RecordingConfig } from './recording-config.js';

const noop = (): void => {};
const optionsOf = (config: RecordingConfig | undefined) => captureOptions(resolveRecordingConfig(config), noop, noop);

describe('canvas recording options', () => {
  it('is off by default: rrweb is told so, with no canvas sampling and no image encoding', () => {
    expect(RECORDING_DEFAULTS).toMatchObject({ recordCanvas: false, canvasFps: 2 });
    const options = optionsOf(undefined);
    expect(options.recordCanvas).toBe(false);
    expect(options.sampling).not.toHaveProperty('canvas');
    expect(options).not.toHaveProperty('dataURLOptions');
    // canvasFps alone turns nothing on.
    expect(optionsOf({ canvasFps: 5 }).recordCanvas).toBe(false);
  });

  it('with recordCanvas, samples each canvas at canvasFps (2 by default) and encodes WebP images', () => {
    const options = optionsOf({ recordCanvas: true });
    expect(options.recordCanvas).toBe(true);
    expect(options.sampling).toMatchObject({ canvas: 2, mousemove: 50, scroll: 150 });
    expect(options.dataURLOptions).toEqual({ type: 'image/webp', quality: CANVAS_IMAGE.quality });
    expect(optionsOf({ recordCanvas: true, canvasFps: 0.5 }).sampling.canvas).toBe(0.5);
    expect(optionsOf({ recordCanvas: true, canvasFps: 7 }).sampling.canvas).toBe(7);
  });

  it('bounds canvasFps: above the maximum it is the maximum; not a positive number, the default', () => {
    expect(CANVAS_FPS_MAX).toBe(10);
    expect(optionsOf({ recordCanvas: true, canvasFps: 60 }).sampling.canvas).toBe(CANVAS_FPS_MAX);
    expect(optionsOf({ recordCanvas: true, canvasFps: Infinity }).sampling.canvas).toBe(2);
    for (const bad of [0, -3, Number.NaN, '5', null]) {
      expect(optionsOf({ recordCanvas: true, canvasFps: bad as number }).sampling.canvas).toBe(2);
    }
  });

  it('takes only a boolean for recordCanvas (anything else is the default, off)', () => {
    for (const bad of ['true', 1, {}, null]) expect(optionsOf({ recordCanvas: bad as boolean }).recordCanvas).toBe(false);
  });

  it('keeps the sampling asked for beside the canvas rate', () => {
    const options = optionsOf({ recordCanvas: true, canvasFps: 4, sampling: { mousemove: false, scroll: 400 } });
    expect(options.sampling).toEqual({ mousemove: false, mouseInteraction: true, scroll: 400, input: 'last', canvas: 4 });
  });
});
