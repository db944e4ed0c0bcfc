/**
 * Entry of the example app: reads the project's keys (`config.ts`), then renders the app inside
 * `<ServiceAnalyticsProvider>`, which creates the analytics client once the app has mounted.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ServiceAnalyticsProvider } from 'service-analytics/react';
import { App } from './app.js';
import { analyticsConfig, loadExampleConfig } from './config.js';
import { RouterProvider, createRouter, titleOf } from './router.js';
import './styles.css';

const container = document.getElementById('root');
if (container === null) throw new Error('index.html has no #root element.');
const root = createRoot(container);
// Before the client starts: its first page_view carries the title.
document.title = titleOf(location.pathname);
const router = createRouter(window);

loadExampleConfig().then(
  (example) => {
    root.render(
      <StrictMode>
        <RouterProvider router={router}>
          <ServiceAnalyticsProvider config={analyticsConfig(example)} loading={<p className="starting">Starting analytics…</p>}>
            <App example={example} />
          </ServiceAnalyticsProvider>
        </RouterProvider>
      </StrictMode>,
    );
  },
  (error: unknown) => {
    root.render(
      <main className="page">
        <h1>The example app cannot start</h1>
        <p className="error" role="alert">
          {error instanceof Error ? error.message : String(error)}
        </p>
      </main>,
    );
  },
);
