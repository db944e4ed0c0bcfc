/**
 * Masking of what a person enters: input values and the text of editable regions (README
 * "Session recording": privacy by default).
 *
 * Inputs: rrweb decides from its `maskInputOptions` whether to pass a value to `maskInputFn`,
 * looking at the element's tag and its *current* type, and it masks all inputs only when told
 * `maskAllInputs`. That leaves two holes: hidden inputs are in none of its lists, and a password
 * field whose type a "show password" button changed to text is masked only when rrweb saw the
 * change happen. So every input, textarea and select is routed through our `maskInputFn`, and the
 * function decides, remembering each element it ever saw as sensitive.
 *
 * Text: rrweb masks a text node when its parent element matches `maskTextClass` or
 * `maskTextSelector` (or an ancestor does), and only then calls `maskTextFn`; it decides per text
 * node, in the full snapshot, for added nodes and for text changes alike. A selector alone cannot
 * say "inside an editable region" for every case (a `designMode` document has no attribute to
 * match, and a person's text moved out of an editor by script matches nothing), so the selector
 * matches every element and `maskTextFn` decides from the element it is given (see
 * {@link createTextMasking}).
 */

/** Input types rrweb knows, plus `hidden`, and the element names it also looks up. */
const ROUTED = [
  'input', 'textarea', 'select-one', 'select-multiple', 'color', 'date', 'datetime-local', 'email', 'month', 'number',
  'range', 'search', 'tel', 'text', 'time', 'url', 'week', 'password', 'hidden',
];

/** `autocomplete` tokens of fields that hold secrets. */
const SECRET_AUTOCOMPLETE = /\b(?:current-password|new-password|one-time-code|cc-number|cc-csc|cc-exp)/i;

/** What rrweb is given to mask input values. */
export interface InputMasking {
  maskInputOptions: Record<string, boolean>;
  maskInputFn(text: string, element: HTMLElement): string;
}

/**
 * Masking of input values.
 * @param maskAllInputs - mask every value; otherwise only sensitive ones (see {@link isSensitiveInput})
 * @param maskClass - inputs with this class are masked too (`maskTextClass`)
 */
export function createInputMasking(maskAllInputs: boolean, maskClass: string): InputMasking {
  const sensitive = new WeakSet<Element>();
  const maskInputOptions: Record<string, boolean> = {};
  for (const key of ROUTED) maskInputOptions[key] = true;
  // rrweb leaves out `selected` of options when `select` is set; set it only when masking all.
  maskInputOptions.select = maskAllInputs;
  return {
    maskInputOptions,
    maskInputFn(text, element) {
      let masked = maskAllInputs || sensitive.has(element);
      if (!masked && (isSensitiveInput(element) || hasClass(element, maskClass))) {
        sensitive.add(element);
        masked = true;
      }
      if (!masked) return text;
      // Remembered even when masking all: the element stays masked if the type changes later.
      if (isSensitiveInput(element)) sensitive.add(element);
      return '*'.repeat(text.length);
    },
  };
}

/**
 * True for a password or hidden input (by attribute or property), one that rrweb marked as having
 * been a password (`data-rr-is-password`), and one whose `autocomplete` names a secret.
 */
export function isSensitiveInput(element: Element): boolean {
  const type = `${element.getAttribute('type') ?? ''} ${(element as HTMLInputElement).type ?? ''}`.toLowerCase();
  return (
    type.includes('password') ||
    type.includes('hidden') ||
    element.hasAttribute('data-rr-is-password') ||
    SECRET_AUTOCOMPLETE.test(element.getAttribute('autocomplete') ?? '')
  );
}

function hasClass(element: Element, name: string): boolean {
  return name !== '' && element.classList?.contains(name) === true;
}

/** Options of {@link createTextMasking}: the RecordingConfig fields about text. */
export interface TextMaskingOptions {
  /** Mask every text, except under `unmaskClass`. */
  maskAllText: boolean;
  /** Text under an element with this class is masked, `unmaskClass` or not. */
  maskTextClass: string;
  /** With `maskAllText`, text under an element with this class is recorded as it is (not editable text). */
  unmaskClass: string;
}

/** What rrweb is given to mask text. */
export interface TextMasking {
  /** Matches every element, so that rrweb hands every text node's text to `maskTextFn`. */
  maskTextSelector: string;
  /**
   * The text as it is recorded: masked with {@link maskText}, or unchanged. `element` is the text
   * node's parent element, null when the parent is a shadow root.
   */
  maskTextFn(text: string, element: HTMLElement | null): string;
}

/**
 * Masks text keeping its length and line breaks, so a replay lays out as the page did: every
 * character other than whitespace becomes `*`, as rrweb's own masking does.
 */
export function maskText(text: string): string {
  return text.replace(/\S/g, '*');
}

/**
 * Text nodes seen inside an editable region. Kept for the page's life, not one recording's: text
 * a person typed is still theirs after a script moves its node out of the editor, or after the
 * editor stops being editable, and a later snapshot (a checkout, a new recording) must still mask
 * it. A WeakSet, so a removed node is not kept alive.
 */
const typed = new WeakSet<Node>();
/** Whether {@link typed} ever got a node: until then, the search of an element's children is skipped. */
let anyTyped = false;

/**
 * Masking of text. Text is masked when it is in an editable region, or when it is a text node
 * once seen in one; these win over everything. An editable region is an element with a
 * `contenteditable` attribute other than `"false"` and everything in it (islands marked
 * `contenteditable="false"` included: editors put what a person chose there, such as mentions),
 * and every element of a document in `designMode`. Text is also masked under `maskTextClass`,
 * and with `maskAllText` everywhere except under `unmaskClass`. The walk up goes on through shadow
 * hosts and through the frame element of a same-origin iframe, so an iframe's text is treated as
 * its frame element's.
 */
export function createTextMasking(options: TextMaskingOptions): TextMasking {
  const { maskAllText, maskTextClass, unmaskClass } = options;
  return {
    maskTextSelector: '*',
    maskTextFn(text, element) {
      // Text directly in a shadow root: where it is cannot be told, so it is masked.
      if (element === null) return maskText(text);
      let masked = false;
      let unmasked = false;
      let doc: Document | null = null;
      for (let node: Element | null = element; node !== null; node = parentAcross(node)) {
        if (node.ownerDocument !== doc) {
          doc = node.ownerDocument;
          if (isDesignMode(doc)) return rememberTyped(text, element);
        }
        if (isEditingHost(node)) return rememberTyped(text, element);
        masked ||= hasClass(node, maskTextClass);
        unmasked ||= hasClass(node, unmaskClass);
      }
      if (masked || (maskAllText && !unmasked) || (anyTyped && holdsTyped(text, element))) return maskText(text);
      return text;
    },
  };
}

/**
 * A `contenteditable` attribute that is not `"false"`: `"true"`, `""` and `"plaintext-only"` make
 * an editing host, and a value the browser does not know (which inherits) is counted as one too,
 * so that a misspelling errs on the masked side.
 */
function isEditingHost(element: Element): boolean {
  const value = element.getAttribute('contenteditable');
  return value !== null && value.toLowerCase() !== 'false';
}

function isDesignMode(doc: Document | null): boolean {
  return doc?.designMode?.toLowerCase() === 'on';
}

/** The parent element; at a shadow root its host, at a document its frame element (same-origin only). */
function parentAcross(element: Element): Element | null {
  if (element.parentElement !== null) return element.parentElement;
  const parent = element.parentNode;
  if (parent === null) return null;
  if (parent.nodeType === 11) return (parent as ShadowRoot).host ?? null;
  if (parent.nodeType === 9) {
    try {
      return (parent as Document).defaultView?.frameElement ?? null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Notes the text nodes of `element` holding `text` as typed, and masks. rrweb gives the text and
 * its parent, not the node: the node is the child whose data is the text (rrweb passes the node's
 * whole data). A sibling with the same text is noted too, which errs on the masked side.
 */
function rememberTyped(text: string, element: Element): string {
  for (let child = element.firstChild; child !== null; child = child.nextSibling) {
    if (child.nodeType === 3 && (child as Text).data === text) {
      typed.add(child);
      anyTyped = true;
    }
  }
  return maskText(text);
}

/** Whether a text node of `element` holding `text` was seen in an editable region. */
function holdsTyped(text: string, element: Element): boolean {
  for (let child = element.firstChild; child !== null; child = child.nextSibling) {
    if (child.nodeType === 3 && (child as Text).data === text && typed.has(child)) return true;
  }
  return false;
}
