/**
 * A/B experiments (`enableABTesting`, `abTestConfig`): variant assignment, its persistence, and the
 * `experiment_exposure` event (docs/decisions.md, "Wire mapping of every client call"). A lazily
 * loaded chunk, loaded at start only when `enableABTesting` is on; the main thread reaches it
 * through `experiment-operations.ts`.
 *
 * Decisions:
 * - Assignment is deterministic (`experiment-assignment.ts`) over the unit id: the user id when
 *   one is set at the first assignment, else the anonymous id. Only `RUNNING` experiments assign.
 * - Each assignment is also stored (localStorage, `service-analytics:<projectId>:experiments`), and
 *   a stored assignment wins over the hash while its variant still exists: a changed traffic split
 *   or a later `identify()` (anonymous → user id) does not move a user to another variant.
 * - `reset()` forgets every assignment and exposure: the new anonymous id is hashed afresh, so the
 *   next `getVariant()` may answer another variant.
 * - `experiment_exposure` {experiment, variant, experiment_id, variant_id, is_control} is sent the
 *   first time `getVariant()` or `isInVariant()` answers a variant for an assignment; the exposure is
 *   stored with the assignment, so a reload does not send it again. `getExperimentAssignments()`
 *   assigns but does not expose.
 * - An experiment that is not `RUNNING` (or not known yet, e.g. before `experimentsUrl` arrived)
 *   answers null and sends nothing; a stored assignment is kept, so resuming it keeps the variant.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { Timers } from '../../protocol/worker/timers.js';
import { assignVariant } from './experiment-assignment.js';
import { fetchExperiments } from './experiments-fetch.js';
import type { ABTestConfig, Experiment, ExperimentAssignment, Variant } from './experiment-types.js';
import type { Logger } from '../logger.js';
import type { KeyValueStore } from '../session/storage.js';

/** Experiment operations of the client. */
export interface ExperimentOperations {
  /**
   * The key of the variant this user is in, or null (A/B testing off, experiment unknown or not
   * `RUNNING`, user outside its traffic, experiments not loaded yet). The first answer per
   * assignment sends `experiment_exposure`.
   */
  getVariant(experimentKey: string): string | null;
  /** Whether `getVariant(experimentKey)` is `variantKey` (and exposes like it). */
  isInVariant(experimentKey: string, variantKey: string): boolean;
  /** This user's assignments in every known `RUNNING` experiment they are in; sends nothing. */
  getExperimentAssignments(): ExperimentAssignment[];
}

/** The operations plus what the facade needs from them. */
export interface Experiments extends ExperimentOperations {
  /** Forgets every assignment and exposure (`reset()`). */
  forget(): void;
  /** Aborts the fetch of `experimentsUrl` if it is still running. */
  stop(): void;
}

/** Options of {@link createExperiments}. */
export interface ExperimentsOptions {
  config: ABTestConfig | undefined;
  store: KeyValueStore;
  /** Storage key of the assignments, per project. */
  key: string;
  /** The id that assignment hashes: the user id, else the anonymous id. */
  unitId(): string;
  /** Sends one event through the facade's funnel. */
  send(event: string, properties: EventProperties): void;
  now(): number;
  log: Logger;
  /** Fetches `experimentsUrl`; undefined outside a browser, where nothing is fetched. */
  fetch: ((url: string, init: RequestInit) => Promise<Response>) | undefined;
  timers: Timers;
}

/** A stored assignment. */
interface Stored {
  /** Variant key. */
  v: string;
  /** Variant id. */
  i: string;
  /** Assigned at, ms. */
  t: number;
  /** 1 once exposed. */
  x?: 1;
}

/** Creates the experiment operations; starts the fetch of `experimentsUrl` when there is one. */
export function createExperiments(options: ExperimentsOptions): Experiments {
  const { store, key, log } = options;
  const config = options.config ?? {};
  const experiments = new Map<string, Experiment>();
  let assignments: Record<string, Stored> = {};
  let stop = (): void => {};
  add(config.experiments, 'abTestConfig.experiments');
  try {
    const stored: unknown = JSON.parse(store.get(key) ?? '{}');
    if (typeof stored === 'object' && stored !== null) assignments = stored as Record<string, Stored>;
  } catch {
    // A corrupt entry: assign afresh.
  }
  if (typeof config.experimentsUrl === 'string' && options.fetch !== undefined) stop = load(config.experimentsUrl, options.fetch);

  /** Adds the usable experiments of `list` (objects with a string key and an array of variants). */
  function add(list: unknown, from: string): void {
    if (list === undefined) return;
    if (!Array.isArray(list)) return log.warn(`${from} is not an array of experiments; ignored`);
    for (const item of list as Experiment[]) {
      // `__proto__` would be a key of the stored assignments object.
      if (typeof item?.key !== 'string' || item.key === '__proto__' || !Array.isArray(item.variants)) {
        log.warn(`${from}: an experiment without a key or variants was ignored`, item);
        continue;
      }
      const variants = item.variants.filter((v: Variant | null) => typeof v?.key === 'string');
      experiments.set(item.key, { ...item, variants });
    }
  }

  function load(url: string, fetch: NonNullable<ExperimentsOptions['fetch']>): () => void {
    const request = fetchExperiments(url, { fetch, timers: options.timers, timeoutMs: config.fetchTimeoutMs ?? 5000 });
    request.result.then(
      (list) => add(list, url),
      (error: unknown) => log.warn(`experiments could not be loaded from ${url}; only inline experiments are used`, error),
    );
    return request.abort;
  }

  function save(): void {
    store.set(key, JSON.stringify(assignments));
  }

  /** The running experiment `experimentKey` and this user's variant in it, assigning when needed. */
  function assignment(experiment: Experiment | undefined): [Stored, Variant] | undefined {
    if (experiment?.status !== 'RUNNING') return undefined;
    const stored = assignments[experiment.key];
    const kept = typeof stored?.t === 'number' ? experiment.variants.find((v) => v.key === stored.v) : undefined;
    if (kept !== undefined) return [stored!, kept];
    const variant = assignVariant(experiment, options.unitId());
    if (variant === null) return undefined;
    const made: Stored = { v: variant.key, i: variant.id, t: options.now() };
    assignments[experiment.key] = made;
    save();
    return [made, variant];
  }

  function getVariant(experimentKey: string): string | null {
    const experiment = experiments.get(experimentKey);
    const found = assignment(experiment);
    if (found === undefined) return null;
    const [stored, variant] = found;
    if (stored.x !== 1 && config.exposureEvent !== false) {
      stored.x = 1;
      save();
      options.send('experiment_exposure', {
        experiment: experiment!.key,
        variant: variant.key,
        experiment_id: experiment!.id,
        variant_id: variant.id,
        is_control: variant.isControl === true,
      });
    }
    return variant.key;
  }

  return {
    getVariant,
    isInVariant: (experimentKey, variantKey) => getVariant(experimentKey) === variantKey && typeof variantKey === 'string',
    getExperimentAssignments() {
      const list: ExperimentAssignment[] = [];
      for (const experiment of experiments.values()) {
        const found = assignment(experiment);
        if (found === undefined) continue;
        const [stored, variant] = found;
        list.push({
          experimentId: experiment.id,
          variantId: variant.id,
          variantKey: variant.key,
          variantName: variant.name,
          isControl: variant.isControl === true,
          assignedAt: new Date(stored.t).toISOString(),
          experiment: { ...experiment, variants: experiment.variants.map((v) => ({ ...v })) },
        });
      }
      return list;
    },
    forget() {
      assignments = {};
      store.remove(key);
    },
    stop: () => stop(),
  };
}
