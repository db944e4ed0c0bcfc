/**
 * Console arguments as one line of text, bounded: the formatting stops once the text passes its
 * cap, objects are walked at most {@link MAX_DEPTH} levels deep and {@link MAX_KEYS} members wide,
 * and a getter or proxy that throws is written as such. Runs off the page's critical path, when the
 * capture's queue is drained (`page-context.ts`), never inside the page's console call.
 *
 * The format specifiers of the console (`%s %d %i %f %o %O %j %c`) are applied to a first string
 * argument as browsers do; `%c` (a CSS style) takes its argument and writes nothing.
 */

/** Deepest object level written; deeper values read `{…}` or `[…]`. */
export const MAX_DEPTH = 3;
/** Most members written per object or array; the rest read `…`. */
export const MAX_KEYS = 20;

/** The formatted text, and whether it was cut at the cap. */
export interface Formatted {
  text: string;
  truncated: boolean;
}

/** Formats console arguments as the console shows them, cut at `maxLength` characters. */
export function formatArgs(args: readonly unknown[], maxLength: number): Formatted {
  const out = new Writer(maxLength);
  let rest = args;
  const first = args[0];
  if (typeof first === 'string' && first.includes('%')) {
    rest = applySpecifiers(first, args.slice(1), out);
  } else if (args.length > 0) {
    writeTop(first, out);
    rest = args.slice(1);
  }
  for (const arg of rest) {
    if (out.full) break;
    out.write(' ');
    writeTop(arg, out);
  }
  return out.result();
}

/** Accumulates text up to its cap. */
class Writer {
  private parts: string[] = [];
  private length = 0;
  full = false;
  constructor(private readonly max: number) {}
  write(text: string): void {
    if (this.full) return;
    if (this.length + text.length > this.max) {
      this.parts.push(text.slice(0, this.max - this.length));
      this.length = this.max;
      this.full = true;
      return;
    }
    this.parts.push(text);
    this.length += text.length;
  }
  result(): Formatted {
    return { text: this.parts.join(''), truncated: this.full };
  }
}

/** Applies `%` specifiers of `format` to `args`; returns the arguments left over. */
function applySpecifiers(format: string, args: readonly unknown[], out: Writer): readonly unknown[] {
  let next = 0;
  let last = 0;
  const pattern = /%([sdifoOjc%])/g;
  for (let m = pattern.exec(format); m !== null && !out.full; m = pattern.exec(format)) {
    out.write(format.slice(last, m.index));
    last = m.index + m[0].length;
    const spec = m[1];
    if (spec === '%') {
      out.write('%');
      continue;
    }
    if (next >= args.length) {
      out.write(m[0]);
      continue;
    }
    const arg = args[next++];
    if (spec === 'c') continue;
    if (spec === 's') writeTop(arg, out);
    else if (spec === 'd' || spec === 'i') out.write(String(typeof arg === 'number' ? Math.trunc(arg) : Number.parseInt(String(arg), 10)));
    else if (spec === 'f') out.write(String(typeof arg === 'number' ? arg : Number.parseFloat(String(arg))));
    else writeValue(arg, out, 0, []);
  }
  out.write(format.slice(last));
  return args.slice(next);
}

/** A top-level argument: a string as it is (not quoted), anything else as a value. */
function writeTop(value: unknown, out: Writer): void {
  if (typeof value === 'string') out.write(value);
  else writeValue(value, out, 0, []);
}

function writeValue(value: unknown, out: Writer, depth: number, seen: object[]): void {
  if (out.full) return;
  switch (typeof value) {
    case 'string':
      return out.write(depth === 0 ? value : JSON.stringify(value));
    case 'number':
    case 'boolean':
    case 'undefined':
      return out.write(String(value));
    case 'bigint':
      return out.write(`${value}n`);
    case 'symbol':
      return out.write(value.toString());
    case 'function':
      return out.write(`ƒ ${value.name || 'anonymous'}()`);
  }
  if (value === null) return out.write('null');
  const object = value as object;
  if (object instanceof Error) return out.write(errorHeader(object));
  if (isNode(object)) return out.write(describeNode(object));
  if (seen.includes(object)) return out.write('[Circular]');
  const isArray = Array.isArray(object);
  if (depth >= MAX_DEPTH) return out.write(isArray ? '[…]' : '{…}');
  seen.push(object);
  try {
    if (isArray) writeArray(object as unknown[], out, depth, seen);
    else writeObject(object, out, depth, seen);
  } catch {
    out.write('[unreadable]');
  } finally {
    seen.pop();
  }
}

function writeArray(array: readonly unknown[], out: Writer, depth: number, seen: object[]): void {
  out.write('[');
  const n = Math.min(array.length, MAX_KEYS);
  for (let i = 0; i < n && !out.full; i++) {
    if (i > 0) out.write(', ');
    writeValue(array[i], out, depth + 1, seen);
  }
  if (array.length > MAX_KEYS) out.write(', …');
  out.write(']');
}

function writeObject(object: object, out: Writer, depth: number, seen: object[]): void {
  if (object instanceof Date) return out.write(Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString());
  if (object instanceof RegExp) return out.write(String(object));
  if (object instanceof Map || object instanceof Set) {
    const name = object instanceof Map ? 'Map' : 'Set';
    out.write(`${name}(${object.size}) `);
    return writeArray([...object].slice(0, MAX_KEYS + 1), out, depth, seen);
  }
  const keys = Object.keys(object);
  const name = object.constructor?.name;
  if (name !== undefined && name !== 'Object' && name !== '') out.write(`${name} `);
  out.write('{');
  const n = Math.min(keys.length, MAX_KEYS);
  for (let i = 0; i < n && !out.full; i++) {
    const key = keys[i]!;
    out.write(`${i > 0 ? ', ' : ''}${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}: `);
    let member: unknown;
    try {
      member = (object as Record<string, unknown>)[key];
    } catch {
      out.write('[unreadable]');
      continue;
    }
    writeValue(member, out, depth + 1, seen);
  }
  if (keys.length > MAX_KEYS) out.write(', …');
  out.write('}');
}

/** `Name: message`, as an error's stack begins. */
export function errorHeader(error: Error): string {
  let name = 'Error';
  let message = '';
  try {
    name = String(error.name || 'Error');
    message = String(error.message ?? '');
  } catch {
    // A hostile getter: the name alone.
  }
  return message === '' ? name : `${name}: ${message}`;
}

function isNode(value: object): value is Node {
  return typeof (value as Node).nodeType === 'number' && typeof (value as Node).nodeName === 'string';
}

/** `<tag id="…" class="…">` for an element; the node's name for other nodes. */
function describeNode(node: Node): string {
  if (node.nodeType !== 1) return node.nodeName.toLowerCase();
  const element = node as Element;
  const id = element.id ? ` id="${element.id}"` : '';
  const cls = typeof element.className === 'string' && element.className !== '' ? ` class="${element.className}"` : '';
  return `<${element.tagName.toLowerCase()}${id}${cls}>`;
}
