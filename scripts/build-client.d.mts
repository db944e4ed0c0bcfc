/** Types of scripts/build-client.mjs, for the tests that check the build. */

/** Size budgets, gzipped bytes. */
export declare const BUDGETS: { facade: number; worker: number };

/** One row of the size table. */
export interface SizeRow {
  name: string;
  /** Output files (relative to dist/client) counted in the row. */
  files: string[];
  /** Minified bytes. */
  bytes: number;
  /** Minified and gzipped bytes. */
  gzip: number;
  /** Gzipped budget, when the row has one. */
  budget?: number;
}

/** One sentence per row over its budget; empty when every budgeted row fits. */
export declare function overBudget(rows: readonly SizeRow[]): string[];

/**
 * Renames the chunks (`name-HASH.js`) after their contents alone, references and source maps
 * included; returns the renamed files and old → new names.
 */
export declare function contentNames(files: Map<string, string>): { files: Map<string, string>; names: Map<string, string> };

/** Builds the client in memory. */
export declare function buildClient(): Promise<{
  /** Output files by path relative to dist/client. */
  files: Map<string, string>;
  rows: SizeRow[];
  /** Source files (relative to the repository) in the main-thread entry. */
  facadeInputs: string[];
  /** Source files in the worker. */
  workerInputs: string[];
}>;
