/** The app's frame: header with navigation, the page of the current path, footer. */
import type { ReactNode } from 'react';
import type { ExampleConfig } from './config.js';
import { ErrorBoundary } from './error-boundary.js';
import { DemoPage } from './pages/demo-page.js';
import { EventsPage } from './pages/events-page.js';
import { HomePage } from './pages/home-page.js';
import { ReplayPage } from './pages/replay-page.js';
import { Link, ROUTES, usePath } from './router.js';

/** The whole app; `example` is the project it reports to. */
export function App({ example }: { example: ExampleConfig }): ReactNode {
  const path = usePath();
  return (
    <>
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="site-header">
        <div className="site-header-inner">
          <Link to="/" className="brand">
            service-analytics <span className="brand-sub">example</span>
          </Link>
          <nav aria-label="Main">
            <ul>
              {ROUTES.map((route) => (
                <li key={route.path}>
                  <Link to={route.path}>{route.title}</Link>
                </li>
              ))}
            </ul>
          </nav>
        </div>
      </header>
      <main id="content" className="page" tabIndex={-1}>
        <ErrorBoundary key={path} name="This page">
          {page(path, example)}
        </ErrorBoundary>
      </main>
      <footer className="site-footer">
        Project <code>{example.projectId}</code> · events go to{' '}
        <code>{example.endpoint ?? (typeof location === 'undefined' ? '' : location.origin)}</code> · see them in the{' '}
        {/* The server serves its dashboard beside the app (`start`, docs/architecture.md). */}
        <a href={`${example.endpoint ?? ''}/dashboard/`}>dashboard</a>
      </footer>
    </>
  );
}

function page(path: string, example: ExampleConfig): ReactNode {
  switch (path) {
    case '/':
      return <HomePage />;
    case '/demo':
      return <DemoPage />;
    case '/events':
      return <EventsPage example={example} />;
    case '/replay':
      return <ReplayPage example={example} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no page at <code>{path}</code>. <Link to="/">Go home</Link>.
          </p>
        </>
      );
  }
}
