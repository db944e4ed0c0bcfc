/**
 * What rrweb is given (capture-options.ts) and input masking (privacy.ts): every RecordingConfig
 * field reaches rrweb, the privacy defaults are explicit, and password and hidden inputs are masked
 * whatever the configuration, also after their type changes.
 */
import { describe, expect, it } from 'vitest';
import { RECORDING_DEFAULTS, captureOptions, resolveRecordingConfig } from './capture-options.js';
import { createInputMasking, isSensitiveInput } from './privacy.js';

const noop = (): void => {};

function input(html: string): HTMLElement {
  const host = document.createElement('div');
  host.innerHTML = html;
  document.body.append(host);
  return host.firstElementChild as HTMLElement;
}

describe('captureOptions(resolveRecordingConfig(config))', () => {
  it('passes the documented defaults: inputs masked, sa-block / sa-ignore / sa-mask, snapshots every 5 minutes', () => {
    const options = captureOptions(resolveRecordingConfig(undefined), noop, noop);
    expect(options).toMatchObject({
      blockClass: 'sa-block',
      ignoreClass: 'sa-ignore',
      maskTextClass: 'sa-mask',
      checkoutEveryNms: 300_000,
      inlineStylesheet: true,
      collectFonts: false,
      sampling: { mousemove: 50, mouseInteraction: true, scroll: 150, input: 'last' },
    });
    expect(RECORDING_DEFAULTS.maskAllInputs).toBe(true);
    // Every input kind is routed through maskInputFn, hidden and password included.
    for (const key of ['input', 'textarea', 'text', 'email', 'password', 'hidden', 'select-one']) {
      expect(options.maskInputOptions[key]).toBe(true);
    }
    expect(options.maskInputFn('4111 1111', input('<input type="text">'))).toBe('*********');
    // rrweb's own maskAllInputs would make it ignore maskInputOptions (and so hidden inputs).
    expect(options).not.toHaveProperty('maskAllInputs');
  });

  it('passes every RecordingConfig field through', () => {
    const sampling = { mousemove: false, mouseInteraction: { MouseUp: false }, scroll: 500, input: 'all' as const };
    const options = captureOptions(
      resolveRecordingConfig({
        checkoutEveryNms: 60_000,
        blockClass: 'private',
        ignoreClass: 'noisy',
        maskTextClass: 'secret',
        maskAllInputs: false,
        inlineStylesheet: false,
        collectFonts: true,
        sampling,
      }),
      noop,
      noop,
    );
    expect(options).toMatchObject({
      checkoutEveryNms: 60_000,
      blockClass: 'private',
      ignoreClass: 'noisy',
      maskTextClass: 'secret',
      inlineStylesheet: false,
      collectFonts: true,
      sampling,
    });
    expect(options.maskInputFn('hello', input('<input type="text">'))).toBe('hello');
    expect(options.maskInputFn('hello', input('<input type="text" class="secret">'))).toBe('*****');
  });

  it('falls back to the default for a value of the wrong type', () => {
    const resolved = resolveRecordingConfig({ maxDuration: -5, maskAllInputs: 'no' as unknown as boolean, sampling: { scroll: Number.NaN } });
    expect(resolved.maxDuration).toBe(RECORDING_DEFAULTS.maxDuration);
    expect(resolved.maskAllInputs).toBe(true);
    expect(resolved.sampling.scroll).toBe(150);
  });

  it("sends rrweb's errors to our error path and tells rrweb they were handled", () => {
    const errors: unknown[] = [];
    const options = captureOptions(resolveRecordingConfig({}), noop, (error) => errors.push(error));
    expect(options.errorHandler(new Error('boom'))).toBe(true);
    expect(errors).toHaveLength(1);
  });
});

describe('createInputMasking(maskAllInputs: false)', () => {
  const { maskInputFn } = createInputMasking(false, 'sa-mask');

  it('masks password and hidden inputs even when maskAllInputs is off', () => {
    expect(maskInputFn('hunter2', input('<input type="password">'))).toBe('*******');
    expect(maskInputFn('csrf-token', input('<input type="hidden" value="csrf-token">'))).toBe('**********');
    expect(maskInputFn('plain', input('<input type="text">'))).toBe('plain');
  });

  it('keeps masking a password input after its type is toggled to text', () => {
    const field = input('<input type="password">');
    expect(maskInputFn('hunter2', field)).toBe('*******');
    field.setAttribute('type', 'text'); // a "show password" button
    expect(maskInputFn('hunter2!', field)).toBe('********');
  });

  it('masks an input rrweb saw change from password (data-rr-is-password), and by autocomplete', () => {
    expect(maskInputFn('abc', input('<input type="text" data-rr-is-password="true">'))).toBe('***');
    expect(maskInputFn('abc', input('<input type="text" autocomplete="current-password">'))).toBe('***');
    expect(maskInputFn('123456', input('<input autocomplete="one-time-code">'))).toBe('******');
    expect(maskInputFn('4111', input('<input autocomplete="cc-number">'))).toBe('****');
  });

  it('masks inputs with the mask class', () => {
    expect(maskInputFn('abc', input('<input class="sa-mask">'))).toBe('***');
  });
});

describe('createInputMasking(maskAllInputs: true)', () => {
  it('masks every value, and still remembers password fields for after a type toggle', () => {
    const { maskInputFn, maskInputOptions } = createInputMasking(true, 'sa-mask');
    expect(maskInputFn('abc', input('<textarea></textarea>'))).toBe('***');
    expect(maskInputOptions.select).toBe(true);
  });

  it('isSensitiveInput() reads the attribute and the property', () => {
    const field = input('<input>') as HTMLInputElement;
    expect(isSensitiveInput(field)).toBe(false);
    field.type = 'password';
    expect(isSensitiveInput(field)).toBe(true);
  });
});
