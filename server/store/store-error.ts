/** What went wrong in a store call that the caller can act on. */
export type StoreErrorCode =
  /** `queryEvents` got a cursor it did not issue (answer 400). */
  | 'INVALID_CURSOR'
  /** `createProject` / `createKey` with an id or key hash that already exists. */
  | 'DUPLICATE'
  /** `createKey` for a project that does not exist. */
  | 'UNKNOWN_PROJECT'
  /** A method was called before `init()` or after `close()`. */
  | 'NOT_OPEN'
  /**
   * A read ran past its time budget, or waited past it behind one that did (answer 503 with
   * `Retry-After`): the database is busy, not broken.
   */
  | 'BUSY';

/**
 * An error of the storage layer that the caller can act on: the request was wrong, or (`BUSY`) it
 * should come again later; every other rejection means the database is unavailable. Check `code`, not `instanceof`, across module copies.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;
  /**
   * `BUSY` only: the read goes on after its refusal, and the same read asked again gets its answer
   * (SQLite's reader); otherwise a retry runs it again (PostgreSQL cancels it).
   */
  readonly continues: boolean;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown; continues?: boolean }) {
    super(message, options);
    this.code = code;
    this.continues = options?.continues === true;
  }
}

/** True for a {@link StoreError}, also one made by another copy of this module. */
export function isStoreError(error: unknown): error is StoreError {
  return error instanceof Error && error.name === 'StoreError' && typeof (error as { code?: unknown }).code === 'string';
}
