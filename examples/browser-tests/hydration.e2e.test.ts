/**
 * Next.js-style server rendering: the provider and every component rendered with react-dom/server
 * in Node (no browser global, nothing sent), then hydrated in real Chromium with the built React
 * entry: no hydration error, and the hydrated components track into the database.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import * as sourceBindings from '../../main/react/index.js';
import { projectRoot } from '../../test-support/browser/client-build.js';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { captureConsole, pageLog, readEvents, waitUntil } from '../../test-support/browser/harness.js';
import { makeApp } from './hydration-app.js';

let env: BrowserTestEnvironment;
let appBundle = '';
beforeAll(async () => {
  // The browser side: React from node_modules, our bindings from the real build (dist/client/react.js).
  const built = await build({
    stdin: {
      contents: `
        import { createElement } from 'react';
        import { hydrateRoot } from 'react-dom/client';
        import * as bindings from ${JSON.stringify(join(inject('clientDir'), 'react.js'))};
        import { makeApp } from ${JSON.stringify(join(projectRoot(), 'examples/browser-tests/hydration-app.tsx'))};
        const errors = [];
        window.hydrationErrors = errors;
        const App = makeApp(bindings, window.analyticsConfig);
        hydrateRoot(document.getElementById('root'), createElement(App), {
          onRecoverableError: (error) => errors.push(String(error && error.message || error)),
        });
        window.hydrated = true;
      `,
      resolveDir: projectRoot(),
      loader: 'tsx',
    },
    bundle: true,
    // The client build sits in a temp folder: its "react" import must find the project's React,
    // the same copy the app uses.
    nodePaths: [join(projectRoot(), 'node_modules')],
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"development"' },
    write: false,
    logLevel: 'error',
  });
  appBundle = built.outputFiles[0]?.text ?? '';
  env = await startEnvironment({
    handle: (req, res) => {
      if (req.url !== '/app.js') return false;
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(appBundle);
      return true;
    },
  });
}, 120_000);
afterAll(() => env?.close());
printPageLogOnFailure();

describe('server rendering and hydration', () => {
  it('renders in Node without sending anything, and hydrates in Chromium without a mismatch', async () => {
    const project = await env.server.createProject();
    const config = { apiKey: project.writeKey, projectId: project.id, endpoint: env.server.url, enableAutoPageTracking: true };

    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    expect(typeof window).toBe('undefined');
    const html = renderToString(createElement(makeApp(sourceBindings, config)));
    expect(fetchSpy).not.toHaveBeenCalled();
    fetchSpy.mockRestore();
    expect(html).toContain('Server rendered');

    env.web.setPage('/ssr.html', {
      html: `<!doctype html><html><head><meta charset="utf-8"><title>ssr</title></head><body>
<div id="root">${html}</div>
<script>window.analyticsConfig = ${JSON.stringify(config)};</script>
<script type="module" src="/app.js"></script>
</body></html>`,
    });
    const context = await env.browser.newContext();
    try {
      const page = await context.newPage();
      captureConsole(page);
      await page.goto(`${env.web.url}/ssr.html`);
      await page.waitForFunction(() => (window as unknown as { hydrated?: boolean }).hydrated === true);
      await page.click('#buy');
      await page.click('#buy');
      await waitUntil('two clicks and the page view are stored', async () => {
        const clicks = await readEvents(env.server.store, project.id, 'hydrated_click');
        const views = await readEvents(env.server.store, project.id, 'page_view');
        return clicks.length === 2 && views.length === 1;
      });
      const errors = await page.evaluate(() => (window as unknown as { hydrationErrors: string[] }).hydrationErrors);
      expect(errors).toEqual([]);
      expect(pageLog.filter((line) => /hydrat|did not match|mismatch/i.test(line))).toEqual([]);
      expect(await page.textContent('h1')).toBe('Server rendered');
    } finally {
      await context.close();
    }
  });
});
