/**
 * What rrweb is given (capture-options.ts) and masking (privacy.ts): every RecordingConfig field
 * reaches rrweb, the privacy defaults are explicit, password and hidden inputs are masked whatever
 * the configuration, also after their type changes, and so is the text of editable regions, also
 * after its node leaves the editor. rrweb's own side (which text it hands to `maskTextFn`) is
 * proved in Chromium: examples/browser-tests/recorder-editable.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RECORDING_DEFAULTS, captureOptions, resolveRecordingConfig } from './capture-options.js';
import { createInputMasking, createTextMasking, isSensitiveInput, maskText } from './privacy.js';

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
    expect(RECORDING_DEFAULTS).toMatchObject({ maskAllText: false, unmaskClass: 'sa-unmask' });
    // Every element's text is handed to maskTextFn, which decides.
    expect(options.maskTextSelector).toBe('*');
    expect(options.maskTextFn('hello world', input('<p>x</p>'))).toBe('hello world');
    expect(options.maskTextFn('hello world', input('<p contenteditable>x</p>'))).toBe('***** *****');
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
        maskAllText: true,
        unmaskClass: 'public',
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
    expect(options.maskTextFn('hello', input('<p>x</p>'))).toBe('*****');
    expect(options.maskTextFn('hello', input('<p class="public">x</p>'))).toBe('hello');
  });

  it('falls back to the default for a value of the wrong type', () => {
    const resolved = resolveRecordingConfig({
      maxDuration: -5,
      maskAllInputs: 'no' as unknown as boolean,
      maskAllText: 1 as unknown as boolean,
      unmaskClass: null as unknown as string,
      sampling: { scroll: Number.NaN },
    });
    expect(resolved.maxDuration).toBe(RECORDING_DEFAULTS.maxDuration);
    expect(resolved.maskAllInputs).toBe(true);
    expect(resolved.maskAllText).toBe(false);
    expect(resolved.unmaskClass).toBe('sa-unmask');
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

/** Builds `html` in the document; answers the element with `id`. */
function build(html: string, id: string): HTMLElement {
  const host = document.createElement('div');
  host.innerHTML = html;
  document.body.append(host);
  return host.querySelector<HTMLElement>(`#${id}`)!;
}

describe('maskText()', () => {
  it('keeps length and whitespace, so the replay lays out the same', () => {
    expect(maskText('Dear Ann,\n\tsee you at 5')).toBe('**** ****\n\t*** *** ** *');
    expect(maskText(' \n ')).toBe(' \n ');
    expect(maskText('')).toBe('');
  });
});

describe('createTextMasking(defaults): editable regions', () => {
  const { maskTextFn } = createTextMasking({ maskAllText: false, maskTextClass: 'sa-mask', unmaskClass: 'sa-unmask' });

  it.each([
    ['contenteditable', '<div id="t" contenteditable>x</div>'],
    ['contenteditable=""', '<div id="t" contenteditable="">x</div>'],
    ['contenteditable="true"', '<div id="t" contenteditable="true">x</div>'],
    ['contenteditable="TRUE"', '<div id="t" contenteditable="TRUE">x</div>'],
    ['contenteditable="plaintext-only"', '<div id="t" contenteditable="plaintext-only">x</div>'],
    ['a value the browser does not know (errs on the masked side)', '<div id="t" contenteditable="yes">x</div>'],
    ['a nested child', '<div contenteditable><ul><li><b id="t">x</b></li></ul></div>'],
    ['a contenteditable="false" island inside an editor', '<div contenteditable><span contenteditable="false"><i id="t">x</i></span></div>'],
    ['an editor inside an unmaskClass element', '<div class="sa-unmask"><p contenteditable id="t">x</p></div>'],
  ])('masks text in %s', (_, html) => {
    expect(maskTextFn('Sentinel text', build(html, 't'))).toBe('******** ****');
  });

  it('leaves ordinary text and contenteditable="false" outside an editor alone, masks sa-mask', () => {
    expect(maskTextFn('Checkout', build('<h1 id="t">x</h1>', 't'))).toBe('Checkout');
    expect(maskTextFn('Checkout', build('<div contenteditable="false"><p id="t">x</p></div>', 't'))).toBe('Checkout');
    expect(maskTextFn('Checkout', build('<div class="sa-mask"><p id="t">x</p></div>', 't'))).toBe('********');
  });

  it('masks every element of a document in designMode', () => {
    const doc = document.implementation.createHTMLDocument('editor');
    // happy-dom has no designMode; Chromium answers "on" (proved in the browser test).
    Object.defineProperty(doc, 'designMode', { value: 'on', configurable: true });
    doc.body.innerHTML = '<p id="t">x</p>';
    expect(maskTextFn('Sentinel', doc.getElementById('t'))).toBe('********');
  });

  it('masks across a shadow root: an element in the shadow tree of a host inside an editor', () => {
    const editor = build('<div id="t" contenteditable><span id="host"></span></div>', 't');
    const shadow = editor.querySelector('#host')!.attachShadow({ mode: 'open' });
    shadow.innerHTML = '<em>x</em>';
    expect(maskTextFn('Sentinel', shadow.querySelector('em'))).toBe('********');
    // Text whose parent is the shadow root itself comes with no element: masked.
    expect(maskTextFn('Sentinel', null)).toBe('********');
  });

  it('keeps masking a text node typed in an editor after a script moves it out, or the editor stops being editable', () => {
    const editor = build('<div id="editor" contenteditable></div><p id="plain">Ordinary</p>', 'editor');
    const plain = editor.parentElement!.querySelector<HTMLElement>('#plain')!;
    const typedNode = document.createTextNode('Typed sentinel');
    editor.append(typedNode);
    expect(maskTextFn('Typed sentinel', editor)).toBe('***** ********');

    plain.append(typedNode);
    expect(maskTextFn('Typed sentinel', plain)).toBe('***** ********');
    typedNode.data = 'Typed sentinel, edited';
    expect(maskTextFn('Typed sentinel, edited', plain)).toBe('***** ********* ******');
    // Its new neighbour, never in an editor, is not masked.
    expect(maskTextFn('Ordinary', plain)).toBe('Ordinary');

    editor.append(typedNode);
    editor.removeAttribute('contenteditable');
    expect(maskTextFn('Typed sentinel, edited', editor)).toBe('***** ********* ******');
  });

  it('masks page text once it is moved into an editor', () => {
    const plain = build('<p id="plain">Page text</p><div id="editor" contenteditable></div>', 'plain');
    const editor = plain.parentElement!.querySelector<HTMLElement>('#editor')!;
    const node = plain.firstChild as Text;
    expect(maskTextFn('Page text', plain)).toBe('Page text');
    editor.append(node);
    expect(maskTextFn('Page text', editor)).toBe('**** ****');
  });
});

describe('createTextMasking(maskAllText, unmaskClass)', () => {
  const { maskTextFn } = createTextMasking({ maskAllText: true, maskTextClass: 'sa-mask', unmaskClass: 'sa-unmask' });

  it('masks all text, except under unmaskClass', () => {
    expect(maskTextFn('Checkout', build('<h1 id="t">x</h1>', 't'))).toBe('********');
    expect(maskTextFn('Checkout', build('<nav class="sa-unmask"><a id="t">x</a></nav>', 't'))).toBe('Checkout');
  });

  it('keeps editable text and maskTextClass text masked under unmaskClass', () => {
    expect(maskTextFn('Checkout', build('<nav class="sa-unmask"><p id="t" contenteditable>x</p></nav>', 't'))).toBe('********');
    expect(maskTextFn('Checkout', build('<nav class="sa-unmask"><p id="t" class="sa-mask">x</p></nav>', 't'))).toBe('********');
    expect(maskTextFn('Checkout', build('<nav class="sa-mask"><p id="t" class="sa-unmask">x</p></nav>', 't'))).toBe('********');
  });

  it('does nothing with unmaskClass when maskAllText is off', () => {
    const { maskTextFn: fn } = createTextMasking({ maskAllText: false, maskTextClass: 'sa-mask', unmaskClass: 'sa-unmask' });
    expect(fn('Checkout', build('<nav class="sa-unmask"><a id="t">x</a></nav>', 't'))).toBe('Checkout');
    expect(fn('Checkout', build('<nav class="sa-unmask"><a id="t" contenteditable>x</a></nav>', 't'))).toBe('********');
  });

  it('an empty class name matches nothing', () => {
    const { maskTextFn: fn } = createTextMasking({ maskAllText: true, maskTextClass: '', unmaskClass: '' });
    expect(fn('Checkout', build('<a id="t" class="">x</a>', 't'))).toBe('********');
  });
});
