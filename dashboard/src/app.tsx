/** The dashboard: sign-in, then the page of the hash route, all on one project's API client. */
import { type ReactNode, useMemo, useState } from 'react';
import { createApiClient } from './api/api-client.js';
import { type Credentials, clearCredentials, loadCredentials, saveCredentials } from './api/credentials.js';
import { Nav } from './components/nav.js';
import { SignIn } from './components/sign-in.js';
import { ApiContext } from './lib/api-context.js';
import type { Route } from './lib/route.js';
import { useHashRoute } from './lib/use-hash-route.js';
import { ErrorsPage } from './pages/errors-page.js';
import { ExperimentsPage } from './pages/experiments-page.js';
import { FunnelsPage } from './pages/funnels-page.js';
import { LivePage } from './pages/live-page.js';
import { OverviewPage } from './pages/overview-page.js';
import { ReplayPage } from './pages/replay-page.js';
import { SessionsPage } from './pages/sessions-page.js';
import { VitalsPage } from './pages/vitals-page.js';

function PageOf({ route }: { route: Route }): ReactNode {
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'live':
      return <LivePage />;
    case 'errors':
      return <ErrorsPage />;
    case 'vitals':
      return <VitalsPage />;
    case 'funnels':
      return <FunnelsPage />;
    case 'experiments':
      return <ExperimentsPage />;
    case 'sessions':
      return <SessionsPage />;
    case 'replay':
      return <ReplayPage key={route.sessionId} sessionId={route.sessionId} />;
  }
}

/** The app; `basePath` is where the API is (`lib/api-base.ts`). */
export function App({ basePath, storage }: { basePath: string; storage: Storage }): ReactNode {
  const [credentials, setCredentials] = useState<Credentials | null>(() => loadCredentials(storage));
  const route = useHashRoute();
  const api = useMemo(() => (credentials === null ? null : createApiClient({ credentials, basePath })), [credentials, basePath]);

  if (credentials === null || api === null) {
    return (
      <SignIn
        basePath={basePath}
        onSignedIn={(c) => {
          saveCredentials(storage, c);
          setCredentials(c);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <Nav
        current={route}
        projectId={credentials.projectId}
        onSignOut={() => {
          clearCredentials(storage);
          setCredentials(null);
        }}
      />
      <main className="content">
        <PageOf route={route} />
      </main>
    </ApiContext.Provider>
  );
}
