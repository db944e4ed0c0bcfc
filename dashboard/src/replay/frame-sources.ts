import type { RecordedEvent } from '../api/wire-types.js';

/*
 * A recording's frames, emptied before the player rebuilds the page. The bundled recorder never
 * keeps a frame's address (rrweb-snapshot drops an iframe's `src` unless told otherwise), but a
 * recording is whatever a holder of the project's public write key uploaded, and the dashboard's
 * policy lets frames load any https address (for the heatmap's live page, docs/protocol.md
 * "Content-Security-Policy"): a crafted recording could otherwise show another site's page inside
 * the replay. So `src` and `srcdoc` of every frame element go, in full snapshots and in the
 * mutations that add frames or set those attributes later.
 */

/** rrweb's event types and sources this reads (rrweb's `EventType` and `IncrementalSource`). */
const FULL_SNAPSHOT = 2;
const INCREMENTAL_SNAPSHOT = 3;
const MUTATION = 0;
/** rrweb-snapshot's node type of an element. */
const ELEMENT_NODE = 2;

const FRAME_TAGS = new Set(['iframe', 'frame']);
const FRAME_SOURCES = ['src', 'srcdoc'];

interface SerializedNode {
  id?: number;
  type?: number;
  tagName?: string;
  attributes?: Record<string, unknown>;
  childNodes?: SerializedNode[];
}

/** Empties a node's frames and notes their ids in `frames`, recursively; returns the node. */
function emptyFrames(node: SerializedNode, frames: Set<number>): SerializedNode {
  if (node.type === ELEMENT_NODE && typeof node.tagName === 'string' && FRAME_TAGS.has(node.tagName.toLowerCase())) {
    if (typeof node.id === 'number') frames.add(node.id);
    if (node.attributes !== undefined) {
      const attributes = { ...node.attributes };
      for (const name of FRAME_SOURCES) delete attributes[name];
      node = { ...node, attributes };
    }
  }
  if (Array.isArray(node.childNodes)) node = { ...node, childNodes: node.childNodes.map((child) => emptyFrames(child, frames)) };
  return node;
}

/** The recording's events with no frame address left in them (see the top of the file); other events as they were. */
export function withoutFrameSources(events: readonly RecordedEvent[]): RecordedEvent[] {
  const frames = new Set<number>();
  return events.map((event) => {
    const data = event.data as { node?: SerializedNode; source?: number; adds?: Array<{ node?: SerializedNode }>; attributes?: Array<{ id?: number; attributes?: Record<string, unknown> }> } | null;
    if (data === null || typeof data !== 'object') return event;
    if (event.type === FULL_SNAPSHOT && data.node !== undefined) return { ...event, data: { ...data, node: emptyFrames(data.node, frames) } };
    if (event.type !== INCREMENTAL_SNAPSHOT || data.source !== MUTATION) return event;
    const adds = Array.isArray(data.adds) ? data.adds.map((add) => (add.node === undefined ? add : { ...add, node: emptyFrames(add.node, frames) })) : data.adds;
    const attributes = Array.isArray(data.attributes)
      ? data.attributes.map((change) => {
          if (typeof change.id !== 'number' || !frames.has(change.id) || change.attributes === undefined) return change;
          const kept = { ...change.attributes };
          for (const name of FRAME_SOURCES) delete kept[name];
          return { ...change, attributes: kept };
        })
      : data.attributes;
    return { ...event, data: { ...data, adds, attributes } };
  });
}
