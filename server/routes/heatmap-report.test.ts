import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestServer, startTestServer } from '../../test-support/server/test-server.js';
import { cellOf, heatmapFixture } from '../../test-support/store/heatmap-fixture.js';
import { isPostgresUrl } from '../store/open-store.js';
import { HEATMAP_GRID, SCROLL_DEPTH_STEP } from '../store/report-store.js';
import type { HeatmapAnswer } from './heatmap-report.js';

/*
 * The heatmap report over HTTP on a real server, on SQLite and PostgreSQL, against direct SQL over
 * the same generated rows (read from the database, not through the store): clicks per selector by
 * one GROUP BY, the positions of the most clicked by another (placed in their cells in plain
 * code), page views reaching each depth by one COUNT each. Then the parameters it refuses.
 */

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 5, 7, 30);

/** `?` placeholders on both databases. */
type All = (sql: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>;

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe.each(STORE_KINDS)('the heatmap report on %s', (kind) => {
  let server: TestServer;
  let all: All;
  let closeDirect: () => Promise<void>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    await server.store.write({ events: heatmapFixture(server.project.id, T0, 4000, 39), chunks: [] });
    if (isPostgresUrl(server.location)) {
      const client = new pg.Client({ connectionString: server.location });
      await client.connect();
      all = async (sql, values) => {
        let n = 0;
        return (await client.query(sql.replace(/\?/g, () => `$${++n}`), values)).rows as Array<Record<string, unknown>>;
      };
      closeDirect = () => client.end();
    } else {
      const db = new Database(server.location, { readonly: true });
      all = async (sql, values) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      closeDirect = async () => void db.close();
    }
  });
  afterAll(async () => {
    await closeDirect?.();
    await server?.close();
  });

  const get = async (query: string, headers: Record<string, string> = { authorization: `ApiKey ${server.project.readKey}` }) => {
    const res = await fetch(`${server.url}/api/v1/reports/heatmap?${query}`, { headers: { 'x-project-id': server.project.id, ...headers } });
    return { status: res.status, body: (await res.json()) as HeatmapAnswer & { error?: string; code?: string } };
  };

  /** The answer as direct SQL gives it. */
  async function direct(range: { from: number; to: number }, path: string, browser: string | undefined, includeBots: boolean, limit: number): Promise<Omit<HeatmapAnswer, 'from' | 'to'>> {
    const pgSql = kind === 'postgres';
    const text = (name: string) => (pgSql ? `(properties ->> '${name}')` : `json_extract(properties, '$.${name}')`);
    const number = (name: string) =>
      pgSql
        ? `CASE WHEN jsonb_typeof(properties -> '${name}') = 'number' THEN (properties ->> '${name}')::float8 END`
        : `CASE WHEN json_type(properties, '$.${name}') IN ('integer', 'real') THEN json_extract(properties, '$.${name}') END`;
    let where = 'project_id = ? AND timestamp >= ? AND timestamp < ? AND path = ?';
    const values: unknown[] = [server.project.id, range.from, range.to, path];
    if (!includeBots) where += ' AND NOT is_bot';
    if (browser !== undefined) {
      where += ' AND browser = ?';
      values.push(browser);
    }
    const groups = (
      await all(`SELECT COALESCE(${text('selector')}, '') AS selector, COUNT(*) AS n FROM events WHERE ${where} AND event_type = 'click' GROUP BY 1`, values)
    )
      .map((g) => ({ selector: String(g.selector), count: Number(g.n) }))
      .sort((a, b) => b.count - a.count || byBytes(a.selector, b.selector));
    const chosen = groups.slice(0, limit);
    const positions = await all(
      `SELECT COALESCE(${text('selector')}, '') AS selector, ${number('relativeX')} AS rx, ${number('relativeY')} AS ry FROM events WHERE ${where} AND event_type = 'click'`,
      values,
    );
    const elements = chosen.map(({ selector, count }) => {
      const cells = new Map<string, { x: number; y: number; count: number }>();
      for (const p of positions) {
        if (p.selector !== selector) continue;
        const x = cellOf(p.rx === null ? null : Number(p.rx));
        const y = cellOf(p.ry === null ? null : Number(p.ry));
        if (x === null || y === null) continue;
        const cell = cells.get(`${x},${y}`) ?? { x, y, count: 0 };
        cell.count++;
        cells.set(`${x},${y}`, cell);
      }
      return { selector, count, cells: [...cells.values()].sort((a, b) => a.y - b.y || a.x - b.x) };
    });
    const depth = `${number('maxScrollDepth')}`;
    const [views] = await all(`SELECT COUNT(*) AS n FROM events WHERE ${where} AND event_type = 'scroll_depth' AND ${depth} IS NOT NULL`, values);
    const pageViews = Number(views!.n);
    const depths = [];
    for (let step = SCROLL_DEPTH_STEP; step <= 100; step += SCROLL_DEPTH_STEP) {
      const [row] = await all(`SELECT COUNT(*) AS n FROM events WHERE ${where} AND event_type = 'scroll_depth' AND ${depth} >= ?`, [...values, step]);
      const n = Number(row!.n);
      depths.push({ depth: step, page_views: n, share: pageViews === 0 ? null : Math.round((n / pageViews) * 1000) / 1000 });
    }
    return {
      path,
      grid: HEATMAP_GRID,
      clicks: { total: groups.reduce((sum, g) => sum + g.count, 0), elements },
      scroll: { page_views: pageViews, depths },
    };
  }

  it('counts clicks by element and cell, and page views by scroll depth, as direct SQL does, over ranges, filters and limits', async () => {
    let clicks = 0;
    for (const range of [
      { from: T0, to: T0 + DAY },
      { from: T0 + 2 * 3_600_000, to: T0 + 9 * 3_600_000 },
    ]) {
      for (const [path, browser] of [['/', undefined], ['/pricing', 'Firefox']] as const) {
        for (const includeBots of [false, true]) {
          for (const limit of [3, 100]) {
            const query = new URLSearchParams({ path, from: String(range.from), to: String(range.to), include_bots: String(includeBots), limit: String(limit) });
            if (browser !== undefined) query.set('browser', browser);
            const { status, body } = await get(query.toString());
            expect(status).toBe(200);
            const { from, to, ...answer } = body;
            expect([from, to]).toEqual([new Date(range.from).toISOString(), new Date(range.to).toISOString()]);
            expect(answer, query.toString()).toEqual(await direct(range, path, browser, includeBots, limit));
            clicks += answer.clicks.total;
          }
        }
      }
    }
    expect(clicks).toBeGreaterThan(1000);
  });

  it('answers a page without events with zeros and null shares', async () => {
    const { status, body } = await get(`path=${encodeURIComponent('/nowhere')}&from=${T0}&to=${T0 + DAY}`);
    expect(status).toBe(200);
    expect(body.clicks).toEqual({ total: 0, elements: [] });
    expect(body.scroll.page_views).toBe(0);
    expect(body.scroll.depths.map((d) => [d.depth, d.page_views, d.share])).toEqual(Array.from({ length: 10 }, (_, i) => [(i + 1) * 10, 0, null]));
  });

  it.each([
    ['', /Give the page as "path"/],
    ['path=pricing', /"path" must be a page path starting with "\/"/],
    ['path=', /"path" must be a page path/],
    ['path=/a&path=/b', /at most once/],
    [`path=/${'x'.repeat(600)}`, /"path" is too long/],
    ['path=/&page=/', /names its page with "path"/],
    ['path=/&limit=0', /"limit" must be an integer from 1 to 100/],
    ['path=/&limit=101', /"limit" must be an integer from 1 to 100/],
    ['path=/&from=2026-02-01&to=2026-01-01', /"from" must be before "to"/],
    ['path=/&from=2024-01-01&to=2026-01-01', /at most 366 days/],
    ['path=/&brwoser=Chrome', /Unknown parameter "brwoser"/],
    ['path=/&browser=', /"browser" must not be empty/],
    ['path=/&include_bots=yes', /"include_bots" must be true or false/],
  ])('refuses %s with 400 VALIDATION_ERROR', async (query, message) => {
    const { status, body } = await get(query);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.error).toMatch(message);
  });

  it("refuses a request without a key, with a write key or another project's read key (401 AUTH_ERROR)", async () => {
    const other = await server.createProject();
    for (const headers of [{} as Record<string, string>, { authorization: `ApiKey ${server.project.writeKey}` }, { authorization: `ApiKey ${other.readKey}` }]) {
      const { status, body } = await get('path=/', headers);
      expect([status, body.code]).toEqual([401, 'AUTH_ERROR']);
    }
  });
});
