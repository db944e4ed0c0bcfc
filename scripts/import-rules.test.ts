/**
 * The layout's rules, read from the import graph of the product code (docs/architecture.md,
 * "Rooms and the rules between them"):
 *
 * - main/ (the page) and server/ never import each other; they meet only in protocol/.
 * - main/ imports worker/ only once: the delivery core, by a dynamic `import()` for the in-process
 *   fallback (so it stays out of the facade's bundle). Not even a type: what both sides name (the
 *   messages, the worker API, the config, timers, the core's dependencies) is the worker contract,
 *   protocol/worker/, which imports nothing from main/ or worker/.
 * - worker/ imports neither main/ nor server/; protocol/ imports none of the three.
 * - dashboard/ (the dashboard app the server serves) imports nothing from main/, worker/ or
 *   server/, not even types: the answers it reads are the wire form, declared in dashboard/ itself;
 *   from protocol/ it may import types only. Of packages it uses React, rrweb-player, and in its
 *   Vite config the build tools; nothing imports dashboard/.
 *
 * - server/store/ is in rooms: the store contract at its top, sqlite/ and postgres/ (each
 *   database's store), clickhouse/ (the events' store for ClickHouse, its own SQL), reports/ (the
 *   report SQL, one text for SQLite and PostgreSQL), aggregates/ (the aggregates kept at ingest:
 *   their groups, sketch, tables and reads, one code for both), shared/. sqlite/, postgres/ and
 *   clickhouse/ never import each other; shared/ imports only the top; clickhouse/ imports only
 *   the top and shared/, and only the top imports it (open-store.ts, index.ts); aggregates/
 *   imports only the top, shared/ and reports/dialect.ts; reports/ imports no database's room but for the
 *   two PostgreSQL helpers of the daily rollups, named below.
 * - No import circle anywhere, type-only imports included.
 *
 * Tests are not product code: they may reach across (a facade test drives a real core).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const ROOMS = ['main', 'worker', 'protocol', 'server', 'dashboard'] as const;
type Room = (typeof ROOMS)[number];

interface Import {
  from: string;
  to: string;
  kind: 'static' | 'type' | 'dynamic';
}

function productFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...productFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !/(^|\/)testing\.ts$|\/testing\//.test(path)) out.push(path);
  }
  return out;
}

/** Every import of `file`: static, type-only or dynamic, with the file it names (package names as they are). */
function allImportsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (specifier: string, kind: Import['kind']): void => {
    found.push({ from: file, to: specifier.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), specifier)) : `package:${specifier}`, kind });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly ? 'type' : 'static');
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly ? 'type' : 'static');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg !== undefined && ts.isStringLiteral(arg)) add(arg.text, 'dynamic');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, 'type');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every relative import of `file`. */
function importsOf(file: string): Import[] {
  return allImportsOf(file).filter((i) => !i.to.startsWith('package:'));
}

function roomOf(path: string): Room | null {
  const top = path.split('/')[0];
  return (ROOMS as readonly string[]).includes(top ?? '') ? (top as Room) : null;
}

const imports = ROOMS.flatMap((room) => productFiles(room)).flatMap(importsOf);
const across = (from: Room, to: Room) => imports.filter((i) => roomOf(i.from) === from && roomOf(i.to) === to);
const show = (list: Import[]) => list.map((i) => `${i.from} -> ${i.to} (${i.kind})`);

describe('the import graph of the product code', () => {
  it('is read: every room has files and imports', () => {
    for (const room of ROOMS) expect(imports.some((i) => roomOf(i.from) === room)).toBe(true);
  });

  it('keeps main/ and server/ apart', () => {
    expect(show([...across('main', 'server'), ...across('server', 'main'), ...across('server', 'worker')])).toEqual([]);
  });

  it('lets main/ import worker/ once, the delivery core, dynamically: no other import, not even a type', () => {
    expect(show(across('main', 'worker'))).toEqual(['main/delivery/delivery-link.ts -> worker/delivery-core.js (dynamic)']);
  });

  it('keeps worker/ free of main/ and server/, and protocol/ free of all three', () => {
    const bad = [...across('worker', 'main'), ...across('worker', 'server'), ...across('protocol', 'main'), ...across('protocol', 'worker'), ...across('protocol', 'server')];
    expect(show(bad)).toEqual([]);
  });

  it('keeps dashboard/ to itself: protocol/ for types at most, React (React DOM portals included) and rrweb-player, and no room imports it', () => {
    const bad = [
      ...across('dashboard', 'main'),
      ...across('dashboard', 'worker'),
      ...across('dashboard', 'server'),
      ...across('dashboard', 'protocol').filter((i) => i.kind !== 'type'),
      ...across('main', 'dashboard'),
      ...across('worker', 'dashboard'),
      ...across('server', 'dashboard'),
      ...across('protocol', 'dashboard'),
    ];
    expect(show(bad)).toEqual([]);
    const allowed = /^package:(react|react-dom|react-dom\/client|rrweb-player|rrweb-player\/dist\/style\.css)$/;
    const packages = productFiles('dashboard/src')
      .flatMap(allImportsOf)
      .filter((i) => i.to.startsWith('package:') && !allowed.test(i.to));
    expect(show(packages)).toEqual([]);
  });

  it('keeps the store in rooms: sqlite/, postgres/ and clickhouse/ apart, shared/ on the contract, aggregates/ and reports/ on neither database', () => {
    const storeRoom = (path: string): string | null => /^server\/store\/(sqlite|postgres|clickhouse|reports|shared|aggregates)\//.exec(path)?.[1] ?? null;
    const between = (from: string, to: string) => imports.filter((i) => storeRoom(i.from) === from && storeRoom(i.to) === to);
    expect(show([...between('sqlite', 'postgres'), ...between('postgres', 'sqlite')])).toEqual([]);
    // ClickHouse's store has its own SQL and its own tables: of server/ it needs the contract and
    // shared/ only, and only the top (open-store.ts, index.ts) chooses it.
    const clickhouseOut = imports.filter(
      (i) => storeRoom(i.from) === 'clickhouse' && i.to.startsWith('server/') && storeRoom(i.to) !== 'clickhouse' && storeRoom(i.to) !== 'shared' && !/^server\/store\/[^/]+$/.test(i.to),
    );
    const clickhouseIn = imports.filter((i) => storeRoom(i.to) === 'clickhouse' && storeRoom(i.from) !== 'clickhouse' && !/^server\/store\/[^/]+$/.test(i.from));
    expect(show([...clickhouseOut, ...clickhouseIn])).toEqual([]);
    const shared = imports.filter((i) => storeRoom(i.from) === 'shared' && i.to.startsWith('server/') && storeRoom(i.to) !== 'shared' && !/^server\/store\/[^/]+$/.test(i.to));
    expect(show(shared)).toEqual([]);
    const aggregates = imports.filter(
      (i) =>
        storeRoom(i.from) === 'aggregates' &&
        i.to.startsWith('server/') &&
        !['aggregates', 'shared'].includes(storeRoom(i.to) ?? '') &&
        !/^server\/store\/[^/]+$/.test(i.to) &&
        i.to !== 'server/store/reports/dialect.js',
    );
    expect(show(aggregates)).toEqual([]);
    // The daily rollups refresh, keep filtered rows and create their PostgreSQL tables themselves;
    // those helpers go to postgres/ with the rollups' drivers when the rollups are next reworked.
    expect(show([...between('reports', 'sqlite'), ...between('reports', 'postgres')])).toEqual([
      'server/store/reports/report-keep.ts -> server/store/postgres/postgres-transaction.js (static)',
      'server/store/reports/rollup-refresh.ts -> server/store/postgres/postgres-transaction.js (static)',
      'server/store/reports/rollup-schema.ts -> server/store/postgres/postgres-schema.js (static)',
    ]);
  });

  it('has no import circle, type-only imports included', () => {
    const files = new Set(ROOMS.flatMap((room) => productFiles(room)));
    const edges = new Map<string, string[]>();
    for (const i of imports) {
      const target = i.to.replace(/\.js$/, '.ts');
      const to = files.has(target) ? target : files.has(target.replace(/\.ts$/, '.tsx')) ? target.replace(/\.ts$/, '.tsx') : null;
      if (to !== null) edges.set(i.from, [...(edges.get(i.from) ?? []), to]);
    }
    // Tarjan's strongly connected components: every component of more than one file is a circle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const connect = (v: string): void => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      for (const w of edges.get(v) ?? []) {
        if (!index.has(w)) {
          connect(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1) circles.push(component.sort());
      }
    };
    for (const file of [...files].sort()) if (!index.has(file)) connect(file);
    expect(circles.map((c) => c.join(' <-> '))).toEqual([]);
  });
});
