/**
 * The pagehide beacon's synchronous gzip (`beacon.ts`): fflate's `gzipSync`. A beacon is handed
 * over during `pagehide`, where the platform's asynchronous `CompressionStream` is not sure to
 * finish.
 *
 * fflate builds its Huffman and CRC tables when its module is evaluated, and this module's chunk
 * is evaluated while the client starts (it starts the delivery core: docs/decisions.md,
 * "Start-up"), where most pages never send a large enough beacon to need them. So the client build
 * (scripts/build-client.mjs) replaces this module with one that evaluates fflate at the first call
 * of {@link gzip}; in the source tree (the tests) fflate is imported as usual.
 */
import { gzipSync } from 'fflate';

/** gzip of `data` (level 6, fflate's smallest window memory: beacon bodies are under 1 MB). */
export function gzip(data: Uint8Array): Uint8Array {
  return gzipSync(data, { level: 6, mem: 4 });
}
