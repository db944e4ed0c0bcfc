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

  it('reads --host and --port after `npm start --` before SA_HOST and SA_PORT, as the server does', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      // The variables name an address this machine does not have: were they read, start would stop with another message.
      const args = [join(import.meta.dirname, 'start.mjs'), '--host', '127.0.0.1', `--port=${port}`];
      const failed = await run(process.execPath, args, { env: { ...process.env, SA_PORT: '8787', SA_HOST: '203.0.113.1' } }).then(
        () => null,
        (error: { code?: number; stderr?: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(`Port ${port} on 127.0.0.1 is in use`);
    } finally {
      holder.close();
    }
  });
});
