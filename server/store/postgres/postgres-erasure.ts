import type pg from 'pg';
import type { DeletedUser } from '../event-store.js';
import { type Beside, erasePostgresUser, USER_EVENT_COLUMNS, type UserEventRow } from '../reports/rollup-erasure.js';
import { ERASURE_AGGREGATE_COLUMNS, rebuildPostgresAggregatesOf } from './postgres-aggregates.js';
import type { KeyRegisterSql } from './postgres-hll.js';

/**
 * The erasure of one user of a project (docs/protocol.md, `DELETE /api/v1/users/:id`), on the
 * caller's transaction: their recording chunks and events deleted, the report aggregates they were
 * counted in adjusted (`postgres-aggregates.ts`), and, around the deletes, every key of theirs
 * taken out of the rollups (`reports/rollup-erasure.ts`). The store runs it in a transaction of
 * its own; the erasure bench runs it in one it rolls back, to time the same users again.
 * `keyRegister` is the `hll` extension's key register where the database has it (`postgres-hll.ts`):
 * with it, an hour row is patched from the few events at the erased keys' registers. `beside`
 * deletes the rows reports kept of the user's days on another connection meanwhile (the store's
 * commits, the bench's rolls back; `postgres-beside.ts`).
 */
export function erasePostgresUserData(
  client: pg.PoolClient,
  projectId: string,
  userId: string,
  keyRegister: KeyRegisterSql | null,
  beside: Beside | null,
): Promise<DeletedUser> {
  return erasePostgresUser(client, projectId, userId, async () => {
    // Only the chunks uploaded under the user's id, as on SQLite (sqlite-database.ts says why).
    const chunks = await client.query('DELETE FROM recording_chunks WHERE project_id = $1 AND user_id = $2', [projectId, userId]);
    // Through `events_by_user` (postgres-schema.ts); what the aggregates and the rollups counted of
    // them, from the rows deleted (a read before the delete would miss an event committed between
    // the two, whose counts and keys would then stay). The two lists share columns: a name twice
    // is the same value twice.
    const erased = await client.query<Record<string, unknown> & UserEventRow>(
      `DELETE FROM events WHERE project_id = $1 AND user_id = $2 RETURNING ${ERASURE_AGGREGATE_COLUMNS}, ${USER_EVENT_COLUMNS}`,
      [projectId, userId],
    );
    await rebuildPostgresAggregatesOf(client, projectId, erased.rows, keyRegister);
    return { result: { events: erased.rowCount ?? 0, recordings: chunks.rowCount ?? 0 }, events: erased.rows };
  }, beside);
}
