/**
 * The one loop that ends what a start began (every start returns a stop: docs/architecture.md,
 * "Conventions"): empties `removers` and runs each once, in order; one that throws goes to
 * `onError` and the rest still run. `createRemovers` (auto/removers.ts), the recorder's runs and the
 * page observers stop through it; the client's `shutdown()` writes the loop out, to keep this
 * function out of the facade's bundle (create-analytics.ts).
 */
export function runRemovers(removers: Array<() => void>, onError: (error: unknown) => void): void {
  for (const remove of removers.splice(0)) {
    try {
      remove();
    } catch (error) {
      onError(error);
    }
  }
}
