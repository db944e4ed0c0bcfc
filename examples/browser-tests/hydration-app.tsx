/**
 * The app of the hydration test, rendered on the server with the React bindings' sources and
 * hydrated in Chromium with the built `react.js` of the client package: both pass their copy of the bindings.
 */
import type { ReactNode } from 'react';
import type * as Bindings from '../../main/react/index.js';

/** The bindings the app is made with. */
export type ReactBindings = Pick<typeof Bindings, 'ServiceAnalyticsProvider' | 'TrackClick' | 'TrackView' | 'TrackForm' | 'useSessionTracking'>;

/** Makes the app component from `bindings`. */
export function makeApp(bindings: ReactBindings, config: Parameters<typeof Bindings.ServiceAnalyticsProvider>[0]['config']): () => ReactNode {
  const { ServiceAnalyticsProvider, TrackClick, TrackView, TrackForm, useSessionTracking } = bindings;
  function Session(): ReactNode {
    const session = useSessionTracking();
    return <p id="clicks">clicks:{session.clicks}</p>;
  }
  return function App(): ReactNode {
    return (
      <ServiceAnalyticsProvider config={config}>
        <main>
          <h1>Server rendered</h1>
          <Session />
          <TrackView event="hero_seen" threshold={0.1}>
            <section>Hero</section>
          </TrackView>
          <TrackClick event="hydrated_click">
            <button id="buy" type="button">
              Buy
            </button>
          </TrackClick>
          <TrackForm formName="newsletter">
            <input name="email" aria-label="email" />
          </TrackForm>
        </main>
      </ServiceAnalyticsProvider>
    );
  };
}
