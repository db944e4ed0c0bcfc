/** The dashboard: sign-in, then the page of the hash route, all on one project's API client. */
import { type ReactNode, useMemo } from 'react';
import { createApiClient } from './api/api-client.js';
import { type Identity, IdentityBar } from './components/identity-bar.js';
import { Nav } from './components/nav.js';
import { SignIn } from './components/sign-in.js';
import { type Access, mayOpen } from './lib/access.js';
import { ApiContext } from './lib/api-context.js';
import type { Route } from './lib/route.js';
import { useHashRoute } from './lib/use-hash-route.js';
import { type SignedIn, credentialsOf, useSignIn } from './lib/use-sign-in.js';
import { AdminPage } from './pages/admin-page.js';
import { ErrorsPage } from './pages/errors-page.js';
import { ExperimentsPage } from './pages/experiments-page.js';
import { FunnelsPage } from './pages/funnels-page.js';
import { HeatmapPage } from './pages/heatmap-page.js';
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
    case 'heatmaps':
      return <HeatmapPage />;
    case 'funnels':
      return <FunnelsPage />;
    case 'experiments':
      return <ExperimentsPage />;
    case 'sessions':
      return <SessionsPage />;
    case 'admin':
      return <AdminPage />;
    case 'replay':
      return <ReplayPage key={route.sessionId} sessionId={route.sessionId} />;
  }
}

/** What the signed-in viewer may open: a link the reports, a read key and a viewer what a read key reads, an admin all. */
function accessOf(signedIn: SignedIn): Access {
  if (signedIn.kind === 'link') return 'link';
  if (signedIn.kind === 'account') return signedIn.session.account.role;
  return 'viewer';
}

/** The app; `basePath` is where the API is (`lib/api-base.ts`). */
export function App({ basePath, storage }: { basePath: string; storage: Storage }): ReactNode {
  const signIn = useSignIn(basePath, storage);
  const route = useHashRoute();
  const { state, ended } = signIn;
  const signedIn = state === null || state === 'signed-out' ? null : state;
  const api = useMemo(
    () => (signedIn === null ? null : createApiClient({ credentials: credentialsOf(signedIn), basePath, onUnauthorized: ended })),
    // The client changes with the credentials (a project chosen), not with the account's details.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [signedIn === null ? '' : JSON.stringify(credentialsOf(signedIn)), basePath, ended],
  );

  if (state === null) return <main className="sign-in muted">Loading…</main>;
  if (signedIn === null || api === null) {
    return <SignIn basePath={basePath} notice={signIn.notice} onSignedIn={signIn.withKey} onAccount={signIn.withAccount} />;
  }
  if (signedIn.kind === 'account' && signedIn.projectId === '') {
    return (
      <main className="sign-in">
        <p className="panel">
          No project yet: make one with <code>npx service-analytics-server project create --name NAME</code>, then reload.{' '}
          <button type="button" className="link" onClick={signIn.signOut}>
            Sign out
          </button>
        </p>
      </main>
    );
  }
  const access = accessOf(signedIn);
  const identity: Identity =
    signedIn.kind === 'account'
      ? { kind: 'account', account: signedIn.session.account, projects: signedIn.session.projects, projectId: signedIn.projectId, onProject: signIn.chooseProject }
      : signedIn.kind === 'key'
        ? { kind: 'key', projectId: signedIn.credentials.projectId }
        : { kind: 'link' };
  return (
    <ApiContext.Provider value={api}>
      <Nav current={route} access={access} identity={<IdentityBar identity={identity} onSignOut={signIn.signOut} />} />
      <main className="content">
        {mayOpen(access, route.page) ? (
          <PageOf key={signedIn.kind === 'account' ? signedIn.projectId : ''} route={route} />
        ) : (
          <p className="panel" role="alert" data-testid="not-allowed">
            {access === 'link' ? 'A shared link shows the reports only.' : 'Only admins open this page.'}
          </p>
        )}
      </main>
    </ApiContext.Provider>
  );
}
