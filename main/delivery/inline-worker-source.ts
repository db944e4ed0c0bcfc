/**
 * The worker's source text for the inline-worker start (a Blob URL). This module is loaded with a
 * dynamic `import()`, so the build emits it as its own chunk and the facade pays nothing for it
 * until the shipped worker file fails to start. The build (`scripts/build-client.mjs`) replaces
 * this file's content with the built worker; from source (tests, a bundler that compiles this
 * package from TypeScript) there is none, and the start moves on to the in-process core.
 */
export const WORKER_SOURCE: string | null = null;
