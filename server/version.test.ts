import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIBRARY } from '../main/version.js';
import { SERVER_VERSION } from './version.js';

describe('versions', () => {
  it("the server's and the client's are the package's", () => {
    const { version } = JSON.parse(readFileSync(new URL('../packages/service-analytics-server/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(SERVER_VERSION).toBe(version);
    expect(LIBRARY.version).toBe(version);
  });
});
