/** A/B testing shapes (SPEC.md "Experiment, Variant, ExperimentAssignment"). */

/** Lifecycle of an experiment. */
export type ExperimentStatus = 'DRAFT' | 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'ARCHIVED';

/** One arm of an experiment. */
export interface Variant {
  id: string;
  name: string;
  key: string;
  description?: string;
  isControl: boolean;
  /** Share of the experiment's traffic for this variant. */
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
  status: ExperimentStatus;
  /** Share of all traffic that enters the experiment. */
  trafficSplit: number;
  variants: Variant[];
  startDate?: string;
  endDate?: string;
  createdAt: string;
  updatedAt: string;
}

/** The variant a user was assigned to. */
export interface ExperimentAssignment {
  experimentId: string;
  variantId: string;
  variantKey: string;
  variantName: string;
  isControl: boolean;
  assignedAt: string;
  experiment?: Experiment;
}

/**
 * Configuration of A/B testing (SPEC.md leaves its fields open). A placeholder: the experiments
 * issue defines its fields; until then any object is accepted and ignored.
 */
export interface ABTestConfig {
  /** Experiments known up front, assigned locally without a server round trip. */
  experiments?: Experiment[];
}
