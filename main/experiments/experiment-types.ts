/** A/B testing shapes: Experiment, Variant, ExperimentAssignment. */

/** Lifecycle of an experiment. */
export type ExperimentStatus = 'DRAFT' | 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'ARCHIVED';

/** One arm of an experiment. */
export interface Variant {
  id: string;
  name: string;
  key: string;
  description?: string;
  isControl: boolean;
  /**
   * Weight of this variant within the experiment: the variants' weights are relative (divided by
   * their sum), so fractions (0.5/0.5) and percents (50/50) both work. A negative or non-numeric
   * weight counts as 0.
   */
  trafficSplit: number;
  createdAt: string;
  updatedAt: string;
}

/** An A/B experiment. */
export interface Experiment {
  id: string;
  name: string;
  key: string;
  description?: string;
  /** Only `RUNNING` experiments assign variants; for the others `getVariant()` answers null. */
  status: ExperimentStatus;
  /**
   * Share of all users that enter the experiment: a fraction from 0 to 1, or a percent above 1 and
   * up to 100 (so `1` means everyone, and 0.5 and 50 both mean half). Anything else counts as 0
   * (nobody enters).
   */
  trafficSplit: number;
  variants: Variant[];
  startDate?: string;
  endDate?: string;
  createdAt: string;
  updatedAt: string;
}

/** The variant a user was assigned to (`getExperimentAssignments()`). */
export interface ExperimentAssignment {
  experimentId: string;
  variantId: string;
  variantKey: string;
  variantName: string;
  isControl: boolean;
  /** When the variant was first assigned in this browser, ISO 8601. */
  assignedAt: string;
  /** The experiment as configured (a copy). */
  experiment?: Experiment;
}

/**
 * Configuration of A/B testing (`AnalyticsConfig.abTestConfig`; its fields are this library's
 * choice). Used only when `enableABTesting` is true.
 */
export interface ABTestConfig {
  /**
   * Experiments known up front: assigned at once, with no network round trip.
   * @default []
   */
  experiments?: Experiment[];
  /**
   * Address of a JSON array of {@link Experiment}, fetched once when the client starts (never
   * outside a browser). Until it arrives, `getVariant()` answers null for the experiments it brings;
   * on failure (network, non-2xx, not an array, timeout) the inline `experiments` stay the only
   * ones, and the debug log says why. A fetched experiment replaces an inline one with the same key.
   * @default undefined (nothing fetched)
   */
  experimentsUrl?: string;
  /**
   * Milliseconds the fetch of `experimentsUrl` may take before it is given up.
   * @default 5000
   */
  fetchTimeoutMs?: number;
  /**
   * Send `experiment_exposure` the first time a variant is used (`getVariant`, `isInVariant`) per
   * experiment and assignment.
   * @default true
   */
  exposureEvent?: boolean;
}
