/*
 * Reused byte buffers for the PostgreSQL store's COPY bodies (docs/decisions.md, "Write path: each
 * event parsed and encoded once"). A group's rows are a few hundred kilobytes; concatenated into one
 * long string and then copied into a new Buffer, every group touched that much new memory twice,
 * which measured several times dearer than writing the rows into a buffer already in use
 * (`bench/hand-off-cost.ts`).
 */

/** Options of {@link createBufferPool}. */
export interface BufferPoolOptions {
  /** Size of a new buffer, bytes. @default 1 MiB */
  initialBytes?: number;
  /** Buffers kept for reuse (the write queue has two groups in flight by default). @default 4 */
  poolSize?: number;
  /** A buffer grown past this for an unusual group is dropped after use, not kept. @default 8 MiB */
  maxKeptBytes?: number;
}

/** A few ArrayBuffers taken for a group and given back once the group no longer needs them. */
export interface BufferPool {
  /** A kept buffer, or a new one when none is free. */
  take(): ArrayBuffer;
  /** Keeps `bytes` for the next {@link take} (unless the pool is full or it grew too large). */
  give(bytes: ArrayBuffer): void;
}

/** Creates a {@link BufferPool}. */
export function createBufferPool(options: BufferPoolOptions = {}): BufferPool {
  const initialBytes = options.initialBytes ?? 1 << 20;
  const poolSize = options.poolSize ?? 4;
  const maxKeptBytes = options.maxKeptBytes ?? 8 << 20;
  const kept: ArrayBuffer[] = [];
  return {
    take: () => kept.pop() ?? new ArrayBuffer(initialBytes),
    give(bytes) {
      // A transferred buffer is detached (0 bytes) on this side: nothing to keep.
      if (kept.length < poolSize && bytes.byteLength > 0 && bytes.byteLength <= maxKeptBytes) kept.push(bytes);
    },
  };
}

/** Text appended as UTF-8 into an ArrayBuffer, which is replaced by one twice as large when the next text might not fit. */
export class Utf8Buffer {
  private view: Buffer;
  /** Bytes written so far. */
  length = 0;

  constructor(bytes: ArrayBuffer) {
    this.view = Buffer.from(bytes);
  }

  /** Appends `text`; @returns the new {@link length}. */
  append(text: string): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: grow before writing, so nothing is cut off.
    const need = this.length + text.length * 3;
    if (need > this.view.length) {
      const grown = Buffer.from(new ArrayBuffer(Math.max(need, this.view.length * 2)));
      this.view.copy(grown, 0, 0, this.length);
      this.view = grown;
    }
    this.length += this.view.write(text, this.length, 'utf8');
    return this.length;
  }

  /** The whole buffer written into (grown or not): give it back to its pool when done. */
  get arrayBuffer(): ArrayBuffer {
    return this.view.buffer as ArrayBuffer;
  }

  /** The bytes written, without a copy. */
  written(): Buffer {
    return this.view.subarray(0, this.length);
  }
}
