/**
 * The README's first `curl` to the batch endpoint, run as written (with `curl`, whose agent the bot
 * list knows) against a real server with a project made by the defaults: it answers `processed: 1`
 * and the event is then there, unflagged, for the read key.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BOT_POLICY } from './store/event-store.js';
import { type TestServer, startTestServer } from '../test-support/server/test-server.js';

const run = promisify(execFile);

/** The README's shell block that posts a batch with curl: its command lines, without the comment. */
function readmeBatchCurl(): { command: string; answer: string } {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const block = /```sh\n(curl -s http:\/\/127\.0\.0\.1:8787\/api\/v1\/events\/batch[\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md has no curl example of the batch endpoint');
  const lines = block.trimEnd().split('\n');
  const answer = (lines.pop() ?? '').replace(/^#\s*/, '');
  return { command: lines.join('\n'), answer };
}

describe("README's curl example of POST /api/v1/events/batch", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server?.close());

  it('is stored as it says, for a project made with the default bot policy', async () => {
    const project = await server.createProject({ bots: DEFAULT_BOT_POLICY });
    const { command, answer } = readmeBatchCurl();
    const { stdout } = await run('bash', ['-c', command.replaceAll('http://127.0.0.1:8787', server.url)], {
      env: { ...process.env, WRITE_KEY: project.writeKey, PROJECT: project.id },
    });
    expect(JSON.parse(stdout)).toEqual(JSON.parse(answer));
    const { events } = await server.store.queryEvents({ projectId: project.id, limit: 10 });
    expect(events.map((e) => [e.eventType, e.userId, e.isBot, e.userAgent?.startsWith('curl/')])).toEqual([['signup', 'u1', false, true]]);
  });
});
