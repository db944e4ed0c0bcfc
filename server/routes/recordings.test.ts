import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestProject, type TestServer, startTestServer } from '../../test-support/server/test-server.js';

function recordedEvents(from: number, n: number) {
  return Array.from({ length: n }, (_, i) => ({ type: 3, data: { source: 1, i: from + i }, timestamp: 1_700_000_000_000 + from + i }));
}

describe.each(STORE_KINDS)('recordings on %s', (kind) => {
  let server: TestServer;
  let project: TestProject;
  beforeAll(async () => {
    server = await startTestServer(kind);
    project = server.project;
  });
  afterAll(() => server.close());

  const upload = (sessionId: string, body: unknown, p: TestProject = project, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/v1/sessions/${sessionId}/recordings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${p.writeKey}`, 'x-project-id': p.id, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const read = (path: string, key = project.readKey) =>
    fetch(`${server.url}${path}`, { headers: { authorization: `ApiKey ${key}`, 'x-project-id': project.id } });

  const chunk = (offset: number, n: number, extra: Record<string, unknown> = {}) => ({
    events: recordedEvents(offset, n),
    duration: (offset + n) / 10,
    start_url: 'https://app.example.com/start',
    user_id: 'user-1',
    is_final: false,
    event_offset: offset,
    ...extra,
  });

  it('stores a chunk and answers { success, stored }', async () => {
    const res = await upload('s-basic', chunk(0, 5));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, stored: 5 });
  });

  it('stores a resent chunk once and answers stored 0 the second time', async () => {
    await upload('s-dup', chunk(0, 3));
    const again = await upload('s-dup', chunk(0, 3));
    expect(await again.json()).toEqual({ success: true, stored: 0 });
    const rec = (await (await read('/api/v1/sessions/s-dup/recording')).json()) as { events: unknown[] };
    expect(rec.events).toHaveLength(3);
  });

  it('reassembles chunks sent out of order, and reports gaps and the final chunk', async () => {
    await upload('s-order', chunk(10, 5, { is_final: true }));
    await upload('s-order', chunk(0, 4));
    const res = await read('/api/v1/sessions/s-order/recording');
    expect(res.status).toBe(200);
    const rec = (await res.json()) as { events: Array<{ data: { i: number } }>; gaps: unknown; finished: boolean; session_id: string };
    expect(rec.session_id).toBe('s-order');
    expect(rec.events.map((e) => e.data.i)).toEqual([0, 1, 2, 3, 10, 11, 12, 13, 14]);
    expect(rec.gaps).toEqual([{ from: 4, to: 10 }]);
    expect(rec.finished).toBe(true);
  });

  it('lists recorded sessions with duration, start url, chunk count and state', async () => {
    await upload('s-list', chunk(0, 2));
    await upload('s-list', chunk(2, 2));
    const res = await read('/api/v1/sessions');
    const { sessions } = (await res.json()) as { sessions: Array<Record<string, unknown>> };
    const s = sessions.find((x) => x.session_id === 's-list');
    expect(s).toMatchObject({
      session_id: 's-list',
      start_url: 'https://app.example.com/start',
      user_id: 'user-1',
      chunk_count: 2,
      event_count: 4,
      duration: 0.4,
      finished: false,
      closed_by: null,
    });
    expect(sessions.find((x) => x.session_id === 's-order')).toMatchObject({ finished: true, closed_by: 'final_chunk' });
  });

  it('answers 404 NOT_FOUND for a session with no recording', async () => {
    const res = await read('/api/v1/sessions/never-recorded/recording');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it.each(['a%20b', '..%2F..%2Fetc', 'x'.repeat(129), '%3Cscript%3E'])('refuses the session id %s with 400', async (id) => {
    const res = await upload(id, chunk(0, 1));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it.each([
    ['no events', { duration: 1, event_offset: 0 }, /^events/],
    ['a negative offset', { events: [], duration: 1, event_offset: -1 }, /^event_offset/],
    ['an event without data', { events: [{ type: 2, timestamp: 1 }], duration: 1, event_offset: 0 }, /data/],
    ['a string type', { events: [{ type: '2', data: {}, timestamp: 1 }], duration: 1, event_offset: 0 }, /^events\.0\.type/],
  ])('refuses a chunk with %s, naming the field', async (_name, body, message) => {
    const res = await upload('s-bad', body);
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { code: string; error: string };
    expect(answer.code).toBe('VALIDATION_ERROR');
    expect(answer.error).toMatch(message);
  });

  it('refuses events nested deeper than the limit and keeps serving', async () => {
    const deep = JSON.parse('{"a":'.repeat(2000) + '1' + '}'.repeat(2000));
    const res = await upload('s-deep', { events: [{ type: 3, data: deep, timestamp: 1_700_000_000_000 }], duration: 1, event_offset: 0 });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await upload('s-deep', chunk(0, 1))).status).toBe(200);
  });

  it('needs a write key to upload and a read key to read', async () => {
    const writeWithRead = await upload('s-auth', chunk(0, 1), { ...project, writeKey: project.readKey });
    expect(writeWithRead.status).toBe(401);
    expect(await writeWithRead.json()).toMatchObject({ code: 'AUTH_ERROR' });
    const readWithWrite = await read('/api/v1/sessions', project.writeKey);
    expect(readWithWrite.status).toBe(401);
    expect(await readWithWrite.json()).toMatchObject({ code: 'AUTH_ERROR' });
  });

  it("keeps one project's recordings from another project's keys", async () => {
    const other = await server.createProject();
    await upload('s-private', chunk(0, 1));
    const res = await fetch(`${server.url}/api/v1/sessions/s-private/recording`, {
      headers: { authorization: `ApiKey ${other.readKey}`, 'x-project-id': other.id },
    });
    expect(res.status).toBe(404);
  });
});
