/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Project id; with `VITE_SA_API_KEY`, used instead of the demo project of `start --demo`. */
  readonly VITE_SA_PROJECT_ID?: string;
  /** Public write key of that project. */
  readonly VITE_SA_API_KEY?: string;
  /** Read key of that project, for the Events and Replay pages (keep it out of real apps). */
  readonly VITE_SA_READ_KEY?: string;
  /** Address of the analytics server. @default the page's origin */
  readonly VITE_SA_ENDPOINT?: string;
}
