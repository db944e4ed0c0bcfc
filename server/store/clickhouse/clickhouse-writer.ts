import type { WriteBatch, WriteResult } from '../event-store.js';
import { cleanText } from '../shared/sanitize.js';
import type { ClickHouseTables } from './clickhouse-schema.js';
import { chunkToRow, eventToRow } from './clickhouse-rows.js';
import type { ClickHouseTransport, Row } from './clickhouse-transport.js';

/*
 * The group commit on ClickHouse (docs/decisions.md, "ClickHouse"). ClickHouse enforces no unique
 * key, so dedupe on (project, event_id) and on (project, session, event_offset) is checked at
 * insert: the keys of the group are looked up by primary index (`event_ids` for events, the chunks'
 * own order for chunks), a key found or repeated earlier in the group is answered "existed", and
 * only the rest is inserted, so the first stored copy wins as on the other stores. The store runs
 * one group at a time (`clickhouse-store.ts`), so within a process no insert falls between a check
 * and its own insert; between processes, see `clickhouse-schema.ts` on ReplacingMergeTree.
 *
 * What a ClickHouse crash can lose: nothing acknowledged. The INSERT is synchronous and answered
 * after its part is written and fsync'd (`fsync_after_insert`); the answer to the client waits for
 * that. A crash during the INSERT loses that group's rows, which were not acknowledged, so the
 * client sends them again. A crash between the events' INSERT and the chunks' INSERT of one group
 * rejects the group: its events are stored and answered "existed" when resent, which the server
 * counts as processed. On a replicated cluster an insert is acknowledged once one replica wrote
 * it (`insert_quorum` raises that), so losing that replica's disk before replication loses it.
 */

/** Keys per lookup: the ids travel as a query parameter, which must stay well under URL limits. */
const LOOKUP_KEYS = 1000;

/** Writes a {@link WriteBatch} with insert-time dedupe; call it for one group at a time. */
export type ClickHouseWrite = (batch: WriteBatch) => Promise<WriteResult>;

/** The group commit of a store on `tables` through `transport`. */
export function createClickHouseWriter(transport: ClickHouseTransport, tables: ClickHouseTables): ClickHouseWrite {
  /** The event ids of `ids` already stored in `projectId`. */
  const storedEventIds = async (projectId: string, ids: readonly string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += LOOKUP_KEYS) {
      const rows = await transport.query(
        `SELECT DISTINCT event_id FROM ${tables.eventIds} WHERE project_id = {project:String} AND event_id IN {ids:Array(String)}`,
        { project: projectId, ids: ids.slice(i, i + LOOKUP_KEYS) },
      );
      for (const row of rows) found.add(String(row.event_id));
    }
    return found;
  };

  /** The `session\0offset` keys of the chunks stored for the sessions `sessions` of `projectId`. */
  const storedChunkKeys = async (projectId: string, sessions: readonly string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    for (let i = 0; i < sessions.length; i += LOOKUP_KEYS) {
      const rows = await transport.query(
        `SELECT DISTINCT session_id, event_offset FROM ${tables.chunks} WHERE project_id = {project:String} AND session_id IN {sessions:Array(String)}`,
        { project: projectId, sessions: sessions.slice(i, i + LOOKUP_KEYS) },
      );
      for (const row of rows) found.add(`${String(row.session_id)}\0${String(Number(row.event_offset))}`);
    }
    return found;
  };

  /** Keeps the first item of each key: which indexes are new to the batch, and the keys by project. */
  const firstOfEachKey = <T>(items: readonly T[], project: (item: T) => string, key: (item: T) => string) => {
    const seen = new Set<string>();
    const first: boolean[] = [];
    const byProject = new Map<string, Set<string>>();
    for (const item of items) {
      const p = project(item);
      const k = key(item);
      const whole = `${p}\0${k}`;
      first.push(!seen.has(whole));
      seen.add(whole);
      const keys = byProject.get(p) ?? new Set<string>();
      keys.add(k);
      byProject.set(p, keys);
    }
    return { first, byProject };
  };

  return async (batch) => {
    const projects = batch.events.map((e) => cleanText(e.projectId));
    const ids = batch.events.map((e) => cleanText(e.eventId));
    const events = firstOfEachKey(batch.events.map((_, i) => i), (i) => projects[i] as string, (i) => ids[i] as string);
    const storedIds = new Map<string, Set<string>>();
    for (const [projectId, keys] of events.byProject) storedIds.set(projectId, await storedEventIds(projectId, [...keys]));
    const eventInserted = batch.events.map((_, i) => events.first[i] === true && !storedIds.get(projects[i] as string)?.has(ids[i] as string));

    const chunkProjects = batch.chunks.map((c) => cleanText(c.projectId));
    const sessions = batch.chunks.map((c) => cleanText(c.sessionId));
    const chunks = firstOfEachKey(batch.chunks.map((_, i) => i), (i) => chunkProjects[i] as string, (i) => `${sessions[i] as string}\0${String(batch.chunks[i]?.eventOffset)}`);
    const storedChunks = new Map<string, Set<string>>();
    for (const [projectId, keys] of chunks.byProject) {
      storedChunks.set(projectId, await storedChunkKeys(projectId, [...new Set([...keys].map((k) => k.slice(0, k.indexOf('\0'))))]));
    }
    const chunkInserted = batch.chunks.map(
      (c, i) => chunks.first[i] === true && !storedChunks.get(chunkProjects[i] as string)?.has(`${sessions[i] as string}\0${String(c.eventOffset)}`),
    );

    const eventRows: Row[] = [];
    batch.events.forEach((e, i) => {
      if (eventInserted[i]) eventRows.push(eventToRow(e, ids[i] as string));
    });
    const chunkRows: Row[] = [];
    batch.chunks.forEach((c, i) => {
      if (chunkInserted[i]) chunkRows.push(chunkToRow(c, sessions[i] as string));
    });
    await transport.insert(tables.events, eventRows);
    await transport.insert(tables.chunks, chunkRows);
    return { eventInserted, chunkInserted };
  };
}
