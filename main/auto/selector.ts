/**
 * A CSS selector for heatmap clicks that stays the same across re-renders of the same UI, so
 * clicks on "the same" element group together. Classes are never used (CSS-in-JS and state
 * classes change between renders). From the element up, each step is, in order of preference:
 * 1. `#id` when the id looks hand-written (ids generated per render, like React's `:r1:`, or
 *    holding a run of 3+ digits, are skipped) — the path stops there;
 * 2. `tag[data-testid="…"]` (or one of {@link STABLE_ATTRIBUTES}; a value of up to 100 characters
 *    without quotes, backslashes or spaces) — the path stops there;
 *    elements sharing one (rows of a list) share the selector, which is what a heatmap groups by;
 * 3. the tag, with `:nth-of-type(n)` when the parent has other children of that tag.
 * An unanchored path ends at `body`, so it is a valid selector for `document.querySelector`. The
 * result is at most {@link MAX_SELECTOR_LENGTH} characters: the steps nearest the element are kept.
 */

/** Attributes that name an element on purpose (for tests or analytics), in order of preference. */
export const STABLE_ATTRIBUTES: readonly string[] = ['data-testid', 'data-test-id', 'data-test', 'data-cy', 'data-qa', 'data-track'];

/** Longest selector, in characters. */
export const MAX_SELECTOR_LENGTH = 256;

/** The selector of `element`, see the module comment. */
export function selectorOf(element: Element): string {
  let selector = '';
  for (let node: Element | null = element; node !== null; node = node.parentElement) {
    const [step, anchored] = stepOf(node);
    const next = selector === '' ? step : `${step} > ${selector}`;
    if (next.length > MAX_SELECTOR_LENGTH) break;
    selector = next;
    if (anchored) break;
  }
  return selector;
}

/** One step of the path, and whether the path can stop at it. */
function stepOf(node: Element): [string, boolean] {
  const tag = node.tagName.toLowerCase();
  if (isStableId(node.id)) return [`#${node.id}`, true];
  for (const name of STABLE_ATTRIBUTES) {
    const value = node.getAttribute(name);
    // Values that would need escaping are skipped: not every selector engine reads escapes.
    if (value !== null && /^[^"\\\s]{1,100}$/.test(value)) return [`${tag}[${name}="${value}"]`, true];
  }
  if (tag === 'body' || tag === 'html') return [tag, true];
  const parent = node.parentElement;
  if (parent === null) return [tag, true];
  let index = 0;
  let sameTag = 0;
  for (const sibling of Array.from(parent.children)) {
    if (sibling.tagName !== node.tagName) continue;
    sameTag++;
    if (sibling === node) index = sameTag;
  }
  return [sameTag > 1 ? `${tag}:nth-of-type(${index})` : tag, false];
}

/** An id that is a plain CSS identifier and does not look generated. */
function isStableId(id: string): boolean {
  return /^[A-Za-z][\w-]*$/.test(id) && !/\d{3}/.test(id);
}
