import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npm start (scripts/start.mjs)', () => {
  it('names a port in use, and the variable that changes it, before building anything', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const failed = await run(process.execPath, [join(import.meta.dirname, 'start.mjs')], { env: { ...process.env, SA_PORT: String(port), SA_HOST: '127.0.0.1' } }).then(
        () => null,
        (error: { code?: number; stdout?: string; stderr?: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toBe(`Port ${port} on 127.0.0.1 is in use: stop what listens there, or start on another port: npm start -- --port ${port + 1} (or SA_PORT=${port + 1} npm start).\n`);
      expect(failed?.stdout).toBe('');
    } finally {
      holder.close();
    }
  });
});
