/**
 * Input masking (DESIGN.md "The recorder": privacy by default). rrweb decides from its
 * `maskInputOptions` whether to pass a value to `maskInputFn`, looking at the element's tag and its
 * *current* type, and it masks all inputs only when told `maskAllInputs`. That leaves two holes:
 * hidden inputs are in none of its lists, and a password field whose type a "show password"
 * button changed to text is masked only when rrweb saw the change happen. So every input, textarea
 * and select is routed through our `maskInputFn`, and the function decides, remembering each
 * element it ever saw as sensitive.
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
