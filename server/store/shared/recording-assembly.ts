import type { RecordedEvent } from '../../../protocol/index.js';
import type { Recording } from '../event-store.js';

/** One stored chunk as the assembler needs it. */
export interface ChunkForAssembly {
  eventOffset: number;
  events: RecordedEvent[];
  isFinal: boolean;
}

/**
 * Reassembles a recording from its chunks, which must come sorted by `eventOffset` (each offset
 * once, as the unique key guarantees). A chunk at offset `o` with `n` events holds the events with
 * absolute indexes `[o, o + n)`. Chunks may overlap when a client re-chunked after a failed upload:
 * an index already emitted is skipped, so every event appears once. Indexes before the next chunk
 * that no chunk covered are reported as gaps; nothing is known past the last chunk, so no gap there.
 */
export function assembleRecording(sessionId: string, chunks: readonly ChunkForAssembly[]): Recording {
  const events: RecordedEvent[] = [];
  const gaps: Array<{ from: number; to: number }> = [];
  let coveredUntil = 0;
  let finished = false;
  for (const chunk of chunks) {
    const start = chunk.eventOffset;
    if (start > coveredUntil) gaps.push({ from: coveredUntil, to: start });
    for (let i = Math.max(0, coveredUntil - start); i < chunk.events.length; i++) events.push(chunk.events[i]);
    coveredUntil = Math.max(coveredUntil, start + chunk.events.length);
    if (chunk.isFinal) finished = true;
  }
  return { sessionId, events, gaps, finished };
}
