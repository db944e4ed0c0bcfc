/** Types of scripts/build-plan.mjs, for its test and the scripts that use it. */

/** One build `npm start` may run. */
export interface Build {
  /** `server`, `dashboard`, `client`, `example`: also the stamp's file name. */
  name: string;
  /** Files and folders (read recursively, test files left out) it is built from, relative to the root. */
  inputs: readonly string[];
  /** Builds whose outputs it reads: they run first, and a change to them rebuilds this one too. */
  after?: readonly string[];
  /** Files the build writes; a missing one means the build has to run. */
  outputs: readonly string[];
  /** The command and its arguments, run in the root. */
  command: readonly string[];
}

/** A build and whether it has to run. */
export interface PlannedBuild {
  build: Build;
  /** The hash of its inputs now, which its stamp holds once it ran. */
  inputsHash: string;
  /** Its outputs exist and were built from these inputs. */
  upToDate: boolean;
}

export interface RunOptions {
  /** Where progress lines go (default: stdout). */
  log?: (line: string) => void;
  /** The builds' own stdout goes to stderr (for a command whose stdout is its answer). */
  outputToStderr?: boolean;
}

/** The repository's root. */
export declare const ROOT: string;

/** The builds `npm start` needs: server, dashboard, client, example app. */
export declare const BUILDS: readonly Build[];

/** Which of `builds` are up to date under `root`. */
export declare function planBuilds(root: string, builds: readonly Build[]): PlannedBuild[];

/** Runs the out-of-date builds in order and stamps each; returns the names of those that ran. */
export declare function runBuilds(root: string, builds: readonly Build[], options?: RunOptions): string[];
