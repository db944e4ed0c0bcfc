import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeProject } from '../../test-support/server/report-fixtures.js';
import { STORE_KINDS, type TestProject, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { isPostgresUrl } from '../store/open-store.js';
import { expectEstimate } from '../../test-support/store/estimates.js';
import { vitalStep } from '../store/shared/vital-steps.js';

/*
 * Every report endpoint, over HTTP on a real server, against numbers computed independently: the
 * project's rows are read with direct SQL (not through the store), and counted here, in SQL where a
 * count is one statement and in plain code where the rule is a walk (funnels, percentiles).
 */

const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 5);
const DAYS = 30;
const SESSIONS = 500;

/** A stored row as the oracle sees it. */
interface Row {
  event_id: string;
  event_type: string;
  session_id: string | null;
  timestamp: number;
  is_bot: boolean;
  path: string | null;
  host: string | null;
  referrer_host: string | null;
  channel: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  screen_class: string | null;
  country: string | null;
  anonymous_id: string | null;
  visitor_id: string | null;
  properties: Record<string, unknown>;
}

/** A direct connection to the test database: `?` placeholders on both. */
interface DirectSql {
  all(sql: string, values: unknown[]): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

async function openDirect(location: string): Promise<DirectSql> {
  if (isPostgresUrl(location)) {
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    return {
      async all(sql, values) {
        let n = 0;
        return (await client.query(sql.replace(/\?/g, () => `$${++n}`), values)).rows as Array<Record<string, unknown>>;
      },
      close: () => client.end(),
    };
  }
  const db = new Database(location, { readonly: true });
  return { all: async (sql, values) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>, close: async () => void db.close() };
}

const DIMENSION_COLUMNS: Record<string, keyof Row> = {
  page: 'path',
  host: 'host',
  referrer: 'referrer_host',
  channel: 'channel',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  browser: 'browser',
  os: 'os',
  device: 'device',
  screen: 'screen_class',
  country: 'country',
  event_type: 'event_type',
};
const PAGE_DIMENSIONS = ['page', 'host', 'referrer', 'channel', 'utm_source', 'utm_medium', 'utm_campaign', 'browser', 'os', 'device', 'screen', 'country'];
const CUSTOM = new Set(['signup_started', 'signup_completed', 'plan_selected', 'purchase']);

const visitorOf = (r: Row) => r.anonymous_id ?? r.visitor_id;
const distinct = (values: Array<string | null>) => new Set(values.filter((v) => v !== null)).size;
const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const p75 = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.75 * sorted.length) - 1] as number;
};

describe.each(STORE_KINDS)('report endpoints on %s', (kind) => {
  let server: TestServer;
  let direct: DirectSql;
  let rows: Row[];
  let projectId: string;
  const from = START;
  const to = START + DAYS * DAY;
  const range = `from=${new Date(from).toISOString()}&to=${to}`;

  beforeAll(async () => {
    server = await startTestServer(kind);
    projectId = server.project.id;
    const written = await writeProject(server.store, { projectId, start: START, days: DAYS, sessions: SESSIONS, seed: 7 });
    expect(written).toBeGreaterThan(SESSIONS * 2);
    direct = await openDirect(server.location);
    rows = (
      await direct.all(
        `SELECT event_id, event_type, session_id, timestamp, is_bot, path, host, referrer_host, channel, utm_source, utm_medium,
           utm_campaign, browser, os, device, screen_class, country, anonymous_id, visitor_id, properties FROM events WHERE project_id = ?`,
        [projectId],
      )
    ).map((r) => ({
      ...(r as unknown as Row),
      timestamp: Number(r.timestamp),
      is_bot: r.is_bot === true || r.is_bot === 1,
      properties: typeof r.properties === 'string' ? (JSON.parse(r.properties) as Record<string, unknown>) : (r.properties as Record<string, unknown>),
    }));
    expect(rows.length).toBe(written);
  }, 120_000);
  afterAll(async () => {
    await direct?.close();
    await server?.close();
  });

  const get = async (path: string, query: string, project: TestProject = server.project, key = project.readKey) => {
    const res = await fetch(`${server.url}/api/v1/reports/${path}?${query}`, {
      headers: { authorization: `ApiKey ${key}`, 'x-project-id': project.id },
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const humans = () => rows.filter((r) => !r.is_bot && r.timestamp >= from && r.timestamp < to);

  it('counts totals and a daily series as direct SQL does, bots left out unless asked for', async () => {
    const { status, body } = await get('timeseries', `${range}&interval=day`);
    expect(status).toBe(200);
    const [sql] = await direct.all(
      `SELECT COUNT(*) AS events, SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS page_views,
         COUNT(DISTINCT COALESCE(anonymous_id, visitor_id)) AS visitors, COUNT(DISTINCT session_id) AS sessions
       FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ? AND NOT is_bot`,
      [projectId, from, to],
    );
    expect(body.totals).toMatchObject({ events: Number(sql?.events), page_views: Number(sql?.page_views) });
    expectEstimate(body.totals.visitors, Number(sql?.visitors), 'visitors');
    expectEstimate(body.totals.sessions, Number(sql?.sessions), 'sessions');
    expect(body.points).toHaveLength(DAYS);
    const perDay = await direct.all(
      `SELECT timestamp / ${DAY} AS d, COUNT(*) AS n FROM events WHERE project_id = ? AND NOT is_bot GROUP BY timestamp / ${DAY}`,
      [projectId],
    );
    for (const point of body.points as Array<{ time: string; events: number; visitors: number }>) {
      const day = Date.parse(point.time) / DAY;
      expect(point.events).toBe(Number(perDay.find((r) => Number(r.d) === day)?.n ?? 0));
      expectEstimate(point.visitors, distinct(humans().filter((r) => Math.floor(r.timestamp / DAY) === day).map(visitorOf)));
    }
    const withBots = await get('timeseries', `${range}&include_bots=true`);
    expect(withBots.body.totals.events).toBe(rows.length);
    expect(rows.some((r) => r.is_bot)).toBe(true);
    const hashed = await get('timeseries', `${range}&visitors=hash`);
    expectEstimate(hashed.body.totals.visitors, distinct(humans().map((r) => r.visitor_id)), 'visitors by hash');
  });

  it('answers an hourly series with every hour of the range', async () => {
    const { body } = await get('timeseries', `from=${from}&to=${from + 2 * DAY}&interval=hour`);
    expect(body.points).toHaveLength(48);
    const expected = humans().filter((r) => r.timestamp < from + 2 * DAY);
    expect((body.points as Array<{ events: number }>).reduce((sum, p) => sum + p.events, 0)).toBe(expected.length);
  });

  it('puts every event of an unaligned range in its hour and its day: series and totals agree', async () => {
    // A range that starts and ends mid-hour, as the API's default range (the 7 days before now) does.
    const start = from + 5 * 3_600_000 + 17 * 60_000;
    const end = start + 3 * DAY;
    const expected = humans().filter((r) => r.timestamp >= start && r.timestamp < end);
    expect(expected.length).toBeGreaterThan(0);
    for (const interval of ['hour', 'day'] as const) {
      const { body } = await get('timeseries', `from=${start}&to=${end}&interval=${interval}`);
      const points = body.points as Array<{ time: string; events: number }>;
      expect(points.reduce((sum, p) => sum + p.events, 0)).toBe(expected.length);
      expect(body.totals.events).toBe(expected.length);
      const size = interval === 'hour' ? 3_600_000 : DAY;
      for (const point of points) {
        const t = Date.parse(point.time);
        expect(t % size).toBe(0);
        expect(point.events).toBe(expected.filter((r) => Math.max(start, t) <= r.timestamp && r.timestamp < Math.min(end, t + size)).length);
      }
    }
  });

  it.each([...Object.keys(DIMENSION_COLUMNS), 'custom_event'])('ranks the top values of %s', async (dimension) => {
    const { status, body } = await get(`top/${dimension}`, `${range}&limit=100`);
    expect(status).toBe(200);
    const column = DIMENSION_COLUMNS[dimension] ?? 'event_type';
    let pool = humans();
    if (PAGE_DIMENSIONS.includes(dimension)) pool = pool.filter((r) => r.event_type === 'page_view');
    if (dimension === 'custom_event') pool = pool.filter((r) => CUSTOM.has(r.event_type));
    const groups = new Map<string, Row[]>();
    for (const r of pool) {
      const value = r[column] as string | null;
      if (value !== null) groups.set(value, [...(groups.get(value) ?? []), r]);
    }
    const expected = [...groups]
      .map(([value, rs]) => ({ value, events: rs.length, visitors: distinct(rs.map(visitorOf)) }))
      .sort((a, b) => b.events - a.events || byBytes(a.value, b.value));
    expect(body.rows).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
  });

  it('counts top pages with a filter as direct SQL does', async () => {
    const { body } = await get('top/page', `${range}&channel=organic_search&device=mobile`);
    const sql = await direct.all(
      `SELECT path AS value, COUNT(*) AS events FROM events
       WHERE project_id = ? AND timestamp >= ? AND timestamp < ? AND NOT is_bot AND event_type = 'page_view'
         AND channel = 'organic_search' AND device = 'mobile' AND path IS NOT NULL
       GROUP BY path ORDER BY COUNT(*) DESC, path LIMIT 10`,
      [projectId, from, to],
    );
    expect(sql.length).toBeGreaterThan(0);
    expect((body.rows as Array<{ value: string; events: number }>).map((r) => [r.value, r.events]).sort()).toEqual(
      sql.map((r) => [r.value, Number(r.events)]).sort(),
    );
  });

  it('counts by country as direct SQL does: its top list with a filter, and a country filter', async () => {
    const { body } = await get('top/country', `${range}&device=mobile`);
    const sql = await direct.all(
      `SELECT country AS value, COUNT(*) AS events FROM events
       WHERE project_id = ? AND timestamp >= ? AND timestamp < ? AND NOT is_bot AND event_type = 'page_view'
         AND device = 'mobile' AND country IS NOT NULL
       GROUP BY country`,
      [projectId, from, to],
    );
    expect(sql.length).toBeGreaterThan(1);
    expect((body.rows as Array<{ value: string; events: number }>).map((r) => [r.value, r.events]).sort()).toEqual(
      sql.map((r) => [r.value, Number(r.events)]).sort(),
    );
    const gb = await get('timeseries', `${range}&country=GB`);
    const [count] = await direct.all(
      `SELECT COUNT(*) AS events FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ? AND NOT is_bot AND country = 'GB'`,
      [projectId, from, to],
    );
    expect(Number(count?.events)).toBeGreaterThan(0);
    expect(gb.body.totals.events).toBe(Number(count?.events));
  });

  it('summarises sessions: count, bounces, duration and pages per session', async () => {
    const { body } = await get('sessions', range);
    const sessions = new Map<string, Row[]>();
    for (const r of humans()) if (r.session_id !== null) sessions.set(r.session_id, [...(sessions.get(r.session_id) ?? []), r]);
    let bounces = 0;
    let duration = 0;
    let pageViews = 0;
    for (const rs of sessions.values()) {
      const pv = rs.filter((r) => r.event_type === 'page_view').length;
      if (pv <= 1) bounces++;
      pageViews += pv;
      const times = rs.map((r) => r.timestamp);
      duration += Math.max(...times) - Math.min(...times);
    }
    expect(body).toMatchObject({ sessions: sessions.size, bounces, page_views: pageViews });
    expect(body.bounce_rate).toBeCloseTo(bounces / sessions.size, 12);
    expect(body.average_duration_ms).toBeCloseTo(duration / sessions.size, 6);
    expect(body.pages_per_session).toBeCloseTo(pageViews / sessions.size, 12);
  });

  it('gives the p75 of each web vital per page', async () => {
    const { body } = await get('vitals', `${range}&limit=100`);
    const perf = humans().filter((r) => r.event_type === 'performance' && r.path !== null);
    const paths = [...new Set(perf.map((r) => r.path as string))];
    // The p75 of the samples, rounded as the report rounds (docs/protocol.md): the same as the p75 of rounded samples.
    const metric = (rs: Row[], name: string) => {
      const exact = p75(rs.map((r) => r.properties[name]).filter((v): v is number => typeof v === 'number'));
      return exact === null ? null : vitalStep(exact);
    };
    const expected = paths
      .map((path) => {
        const rs = perf.filter((r) => r.path === path);
        return {
          path,
          samples: rs.length,
          lcp: metric(rs, 'largestContentfulPaint'),
          inp: metric(rs, 'interactionToNextPaint'),
          cls: metric(rs, 'cumulativeLayoutShift'),
          fcp: metric(rs, 'firstContentfulPaint'),
        };
      })
      .sort((a, b) => b.samples - a.samples || byBytes(a.path, b.path));
    expect(body.pages).toEqual(expected);
  });

  it('groups errors by message with the count, the last time and the last stack', async () => {
    const { body } = await get('errors', range);
    const errors = humans().filter((r) => r.event_type === 'error');
    const messages = [...new Set(errors.map((r) => r.properties.message as string))];
    const expected = messages
      .map((message) => {
        const rs = errors.filter((r) => r.properties.message === message).sort((a, b) => b.timestamp - a.timestamp || byBytes(b.event_id, a.event_id));
        return {
          message,
          count: rs.length,
          visitors: distinct(rs.map(visitorOf)),
          last_seen: new Date(rs[0]!.timestamp).toISOString(),
          last_stack: rs[0]!.properties.stack,
        };
      })
      .sort((a, b) => b.count - a.count || byBytes(a.message, b.message));
    expect(body.errors).toEqual(expected);
    expect(expected.length).toBe(3);
  });

  it('follows a funnel of page paths and event types in order within each session', async () => {
    const steps = ['page:/signup', 'event:signup_started', 'event:signup_completed'];
    const { status, body } = await get('funnel', `${range}&${steps.map((s) => `step=${encodeURIComponent(s)}`).join('&')}`);
    expect(status).toBe(200);
    const matches = (r: Row, step: string) =>
      step.startsWith('page:') ? r.event_type === 'page_view' && r.path === step.slice(5) : r.event_type === step.slice(6);
    const reached = steps.map(() => 0);
    const sessions = new Map<string, Row[]>();
    for (const r of humans()) if (r.session_id !== null) sessions.set(r.session_id, [...(sessions.get(r.session_id) ?? []), r]);
    for (const rs of sessions.values()) {
      rs.sort((a, b) => a.timestamp - b.timestamp || byBytes(a.event_id, b.event_id));
      let k = 0;
      for (const r of rs) {
        if (k < steps.length && matches(r, steps[k]!)) reached[k++]!++;
      }
    }
    expect((body.steps as Array<{ sessions: number }>).map((s) => s.sessions)).toEqual(reached);
    expect(reached[0]).toBeGreaterThan(reached[2]!);
    expect(body.steps[1]).toMatchObject({ step: 'event:signup_started', drop_off: reached[0]! - reached[1]! });
    expect(body.steps[2].conversion_rate).toBeCloseTo(reached[2]! / reached[0]!, 12);
  });

  it('counts exposures and conversions after exposure per variant', async () => {
    const { body } = await get('experiments/checkout-button', `${range}&conversion=purchase`);
    const exposures = humans().filter((r) => r.event_type === 'experiment_exposure' && r.properties.experiment === 'checkout-button');
    const expected = ['control', 'green'].map((variant) => {
      const first = new Map<string, number>();
      for (const r of exposures.filter((e) => e.properties.variant === variant)) {
        const v = visitorOf(r);
        if (v !== null) first.set(v, Math.min(first.get(v) ?? Infinity, r.timestamp));
      }
      let conversions = 0;
      for (const [v, at] of first) {
        if (humans().some((r) => r.event_type === 'purchase' && visitorOf(r) === v && r.timestamp >= at)) conversions++;
      }
      return { variant, exposures: first.size, conversions, conversion_rate: conversions / first.size };
    });
    expect(body.variants).toEqual(expected);
    const plain = await get('experiments/checkout-button', range);
    expect(plain.body.variants.map((v: { exposures: number; conversions: null }) => [v.exposures, v.conversions])).toEqual(
      expected.map((v) => [v.exposures, null]),
    );
  });

  it('lists the experiments with exposures in the range, by exposed visitors', async () => {
    const { status, body } = await get('experiments', range);
    expect(status).toBe(200);
    const visitors = new Map<string, Set<string>>();
    for (const r of humans()) {
      const name = r.properties.experiment;
      const v = visitorOf(r);
      if (r.event_type !== 'experiment_exposure' || typeof name !== 'string' || name === '' || v === null) continue;
      visitors.set(name, (visitors.get(name) ?? new Set()).add(v));
    }
    const expected = [...visitors]
      .map(([experiment, set]) => ({ experiment, visitors: set.size }))
      .sort((a, b) => b.visitors - a.visitors || byBytes(a.experiment, b.experiment))
      .slice(0, 10);
    expect(expected.length).toBeGreaterThan(0);
    expect(body.experiments).toEqual(expected);
  });

  it('shows live events of the last minutes, with the report columns filled at ingest', async () => {
    const project = await server.createProject();
    const page = JSON.stringify({ url: 'https://live.example/now?utm_source=partner-blog', path: '/now', referrer: 'https://www.bing.com/', search: '' });
    const agent = 'Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0';
    const events = [0, 1, 2].map((i) =>
      makeEvent({ event_type: 'page_view', session_id: `live-${i}`, user_agent: agent, properties: { page, anonymous_id: `a${i % 2}` } }),
    );
    expect((await server.postBatch(events, { project })).status).toBe(200);
    const { body } = await get('live', 'minutes=5', project);
    expect(body.totals).toEqual({ events: 3, page_views: 3, visitors: 2, sessions: 3 });
    expect(body.points.length).toBeGreaterThanOrEqual(5);
    const top = await get('top/browser', '', project);
    expect(top.body.rows).toEqual([{ value: 'Firefox', events: 3, visitors: 2 }]);
    const [stored] = await direct.all('SELECT host, path, channel, utm_source, os, device FROM events WHERE project_id = ? LIMIT 1', [project.id]);
    expect(stored).toEqual({ host: 'live.example', path: '/now', channel: 'referral', utm_source: 'partner-blog', os: 'Linux', device: 'desktop' });
  });
});

describe.each(STORE_KINDS)('the country of the client address on %s', (kind) => {
  let server: TestServer;
  let direct: DirectSql;
  beforeAll(async () => {
    // Behind a proxy on this machine: the test's requests name their client in X-Forwarded-For.
    server = await startTestServer(kind, { trustProxy: true });
    direct = await openDirect(server.location);
  });
  afterAll(async () => {
    await direct?.close();
    await server?.close();
  });

  const get = async (path: string, project: TestProject) => {
    const res = await fetch(`${server.url}/api/v1/${path}`, { headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.id } });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  const send = async (project: TestProject, client: string | null, events: Array<Record<string, unknown>>) => {
    const res = await server.postBatch(events, { project, headers: client === null ? {} : { 'x-forwarded-for': client } });
    expect(res.status).toBe(200);
  };
  const pageView = (anonymousId: string) => makeEvent({ event_type: 'page_view', properties: { anonymous_id: anonymousId } });
  const stored = (project: TestProject) =>
    direct.all('SELECT event_id, ip_address, country FROM events WHERE project_id = ? ORDER BY event_id', [project.id]);

  it('stores the country of the full address, and the address truncated; none for loopback', async () => {
    const project = await server.createProject();
    const gb = [pageView('a1'), pageView('a1')];
    const us = [pageView('a2')];
    const v6 = [pageView('a3')];
    const local = [pageView('a4')];
    await send(project, '81.2.69.160', gb);
    await send(project, '8.8.8.8', us);
    await send(project, '2a00:1450:4001::1', v6);
    await send(project, null, local);
    const rows = new Map((await stored(project)).map((r) => [r.event_id as string, r]));
    const row = (e: Record<string, unknown>) => rows.get(e.event_id as string);
    for (const e of gb) expect(row(e)).toMatchObject({ ip_address: '81.2.69.0', country: 'GB' });
    expect(row(us[0]!)).toMatchObject({ ip_address: '8.8.8.0', country: 'US' });
    expect(row(v6[0]!)).toMatchObject({ ip_address: '2a00:1450:4001::' });
    expect(row(v6[0]!)?.country).toMatch(/^[A-Z]{2}$/);
    expect(row(local[0]!)).toMatchObject({ ip_address: '127.0.0.0', country: null });

    // Reported and filtered like any dimension: the top list counts page views.
    const top = await get('reports/top/country?limit=100', project);
    expect(top.rows).toEqual(
      expect.arrayContaining([
        { value: 'GB', events: 2, visitors: 1 },
        { value: 'US', events: 1, visitors: 1 },
      ]),
    );
    expect(top.rows).toHaveLength(3);
    expect((await get('reports/timeseries?country=GB', project)).totals).toMatchObject({ events: 2, page_views: 2, visitors: 1 });
    expect((await get('reports/top/country?country=US', project)).rows).toEqual([{ value: 'US', events: 1, visitors: 1 }]);
    // The read API's listing takes the same filter.
    const listed = await get('events?country=GB', project);
    expect((listed.events as Array<{ event_id: string }>).map((e) => e.event_id).sort()).toEqual(gb.map((e) => e.event_id).sort());
  });

  it('stores the country beside the full address for a project that keeps full addresses', async () => {
    const project = await server.createProject({ fullIp: true });
    await send(project, '81.2.69.160', [pageView('b1')]);
    expect(await stored(project)).toEqual([expect.objectContaining({ ip_address: '81.2.69.160', country: 'GB' })]);
  });
});

describe('report endpoints: validation and authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  const get = async (path: string, headers: Record<string, string> = { authorization: `ApiKey ${server.project.readKey}` }) => {
    const res = await fetch(`${server.url}/api/v1/reports/${path}`, { headers: { 'x-project-id': server.project.id, ...headers } });
    return { status: res.status, body: (await res.json()) as { error?: string; code?: string } };
  };

  it.each([
    ['timeseries?from=yesterday', /"from" must be an ISO 8601 time/],
    ['timeseries?from=2026-02-01&to=2026-01-01', /"from" must be before "to"/],
    ['timeseries?from=2024-01-01&to=2026-01-01', /at most 366 days/],
    ['timeseries?from=2026-01-01&to=2026-03-01&interval=hour', /at most 31 days/],
    ['timeseries?interval=week', /"interval" must be hour or day/],
    ['timeseries?brwoser=Chrome', /Unknown parameter "brwoser"/],
    ['timeseries?browser=', /"browser" must not be empty/],
    ['timeseries?browser=a&browser=b', /at most once/],
    ['timeseries?include_bots=yes', /"include_bots" must be true or false/],
    ['timeseries?visitors=cookies', /"visitors" must be anonymous or hash/],
    ['top/page?limit=101', /"limit" must be an integer from 1 to 100/],
    ['top/page?limit=0', /"limit" must be an integer from 1 to 100/],
    ['funnel?step=event:a', /2 to 10 "step"/],
    [`funnel?${Array.from({ length: 11 }, (_, i) => `step=event:e${i}`).join('&')}`, /2 to 10 "step"/],
    ['funnel?step=event:a&step=click', /"event:TYPE" or "page:PATH"/],
    ['experiments/x?conversion=', /"conversion" must not be empty/],
    ['experiments?limit=101', /"limit" must be an integer from 1 to 100/],
    ['live?minutes=61', /"minutes" must be an integer from 1 to 60/],
    ['live?from=2026-01-01', /takes "minutes", not "from"/],
  ])('refuses %s with 400 VALIDATION_ERROR', async (path, message) => {
    const { status, body } = await get(path);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.error).toMatch(message);
  });

  it('answers 404 NOT_FOUND for an unknown top-N dimension', async () => {
    const { status, body } = await get('top/colour');
    expect([status, body.code]).toEqual([404, 'NOT_FOUND']);
  });

  it.each(['timeseries', 'top/page', 'sessions', 'vitals', 'errors', 'funnel?step=event:a&step=event:b', 'experiments', 'experiments/x', 'live'])(
    'refuses %s without a key, with a write key and with another project\'s read key (401 AUTH_ERROR)',
    async (path) => {
      const other = await server.createProject();
      for (const headers of [
        {} as Record<string, string>,
        { authorization: `ApiKey ${server.project.writeKey}` },
        { authorization: `ApiKey ${other.readKey}` },
      ]) {
        const { status, body } = await get(path, headers);
        expect([status, body.code]).toEqual([401, 'AUTH_ERROR']);
      }
      expect((await get(path)).status).toBe(200);
    },
  );
});
