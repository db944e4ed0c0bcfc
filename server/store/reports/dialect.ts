/**
 * What differs between SQLite and PostgreSQL in the report SQL, and the values of a statement, in
 * one module that imports nothing: the report queries, the aggregate queries, the rollup queries
 * and the rollup refresh all take a {@link Dialect} and none of them needs another's
 * implementation to name it.
 */

/** How a store computes its funnels; see the comment at the top of `report-funnel.ts`. */
export type FunnelWalk = 'sequences' | 'first-matches';

/** What differs between SQLite and PostgreSQL in the report SQL. */
export interface Dialect {
  /** The placeholder of the `n`th value (1-based). */
  placeholder(n: number): string;
  /** The literal of `is_bot = false`. */
  falseValue: string;
  /** The literal of `is_bot = true`. */
  trueValue: string;
  /** A string property of `properties`, as text (null when absent). */
  textProperty(name: string): string;
  /** A numeric property of `properties`, as a number (null when absent or not a number). */
  numberProperty(name: string): string;
  /** An expression ordered by bytes, whatever the database's collation. */
  byteOrder(expression: string): string;
  /** The aggregate of an expression's values (numbers or text) as comma-separated text, in `order`. */
  orderedConcat(expression: string, order: string): string;
  /** How funnels are computed: the statement this database runs faster (`report-funnel.ts`). */
  funnelWalk: FunnelWalk;
  /**
   * A text column of `events` as the key dictionary (`rollup_keys`) compares its keys, so that a
   * lookup of the key by its index is possible.
   */
  asDictionaryKey(expression: string): string;
  /**
   * How a statement flags its rows whose key is in a small list it built (a CTE): `in`, an IN
   * list, which SQLite indexes on the fly; `join`, a left join, which PostgreSQL hashes where it
   * would scan an IN list it overestimates once per row.
   */
  listMembership: 'in' | 'join';
  /**
   * How the sessions report reads the hour rows of the sessions crossing its range's ends
   * (`aggregates/aggregate-queries.ts`): `keys`, each hour of each one's span listed and its row
   * sought by the whole key (SQLite: a range of hours per session read every session of those
   * hours, 24–30 ms at thirty million events), or `ranges`, a correlated subquery per session over
   * its hours (PostgreSQL: it hashed the listed hours against every session hour, 1.2 s at ten
   * million events).
   */
  crossingHours: 'keys' | 'ranges';
}

/** Collects the values of one statement and names their placeholders in order. */
export class Values {
  readonly list: unknown[] = [];
  constructor(private readonly dialect: Dialect) {}
  /** Adds a value; returns its placeholder. Called in the order of the statement's text. */
  add(value: unknown): string {
    this.list.push(value);
    return this.dialect.placeholder(this.list.length);
  }
}

/** What a statement tells the database that runs it, beyond its text. */
export interface QueryHints {
  /**
   * The statement reads few rows through a partial index whose selectivity the database cannot
   * estimate (the sessions that span days): it should not scan whole tables instead. PostgreSQL
   * turns sequential scans off for it; SQLite follows the index anyway.
   */
  indexesOnly?: boolean;
  /**
   * The statement reads the events of its whole range (no aggregate or rollup answers it), so its
   * cost grows with them: SQLite's reader runs such reads on at most one of its threads
   * (`sqlite-store.ts`), so that other reads never wait behind them.
   */
  scan?: boolean;
}

/** Runs a statement and returns its rows. */
export type RunQuery = (sql: string, values: unknown[], hints?: QueryHints) => Promise<Array<Record<string, unknown>>>;

/** SQLite: `?` placeholders, integer booleans, JSON1. */
export const SQLITE_DIALECT: Dialect = {
  placeholder: () => '?',
  falseValue: '0',
  trueValue: '1',
  textProperty: (name) => `json_extract(properties, '$.${name}')`,
  numberProperty: (name) =>
    `CASE WHEN json_type(properties, '$.${name}') IN ('integer', 'real') THEN json_extract(properties, '$.${name}') END`,
  byteOrder: (expression) => expression,
  orderedConcat: (expression, order) => `group_concat(${expression}, ',' ORDER BY ${order})`,
  funnelWalk: 'sequences',
  asDictionaryKey: (expression) => expression,
  listMembership: 'in',
  crossingHours: 'keys',
};

/** PostgreSQL: `$n` placeholders, booleans, jsonb operators, the "C" collation for byte order. */
export const POSTGRES_DIALECT: Dialect = {
  placeholder: (n) => `$${n}`,
  falseValue: 'false',
  trueValue: 'true',
  textProperty: (name) => `(properties ->> '${name}')`,
  numberProperty: (name) => `CASE WHEN jsonb_typeof(properties -> '${name}') = 'number' THEN (properties ->> '${name}')::float8 END`,
  byteOrder: (expression) => `${expression} COLLATE "C"`,
  orderedConcat: (expression, order) => `string_agg((${expression})::text, ',' ORDER BY ${order})`,
  // Version 15 sorts each session's rows on their own for the ordered aggregate (docs/decisions.md,
  // "Daily rollups").
  funnelWalk: 'first-matches',
  // The events' text columns are "C"-collated (byte order), the dictionary's keys in the database's
  // default collation: compared as they stand, the two collations conflict and the dictionary's
  // index cannot serve the lookup, which then reads the whole dictionary for every event.
  asDictionaryKey: (expression) => `(${expression}) COLLATE "default"`,
  // The sessions spanning days: 489 over a month at 10M events, estimated at 467,440 (their
  // partial index's condition is an expression), too many to hash as an IN list.
  listMembership: 'join',
  crossingHours: 'ranges',
};
