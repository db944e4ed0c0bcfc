/** A titled card that shows its resource's loading, error and "not available" states itself. */
import { type ReactNode, useEffect, useState } from 'react';
import type { Resource } from '../lib/use-resource.js';

/**
 * After this long loading, the panel says why: the server may be computing a range it has not
 * kept yet, and the client retries a report past the read budget (`api/api-client.ts`).
 */
export const SLOW_AFTER_MS = 3000;

/**
 * True once the load `loading` (its resource; null when none is loading) has lasted
 * {@link SLOW_AFTER_MS}: a new load (a new range) starts counting again.
 */
function useSlow(loading: object | null): boolean {
  const [slow, setSlow] = useState(false);
  useEffect(() => {
    setSlow(false);
    if (loading === null) return;
    const timer = setTimeout(() => setSlow(true), SLOW_AFTER_MS);
    return () => clearTimeout(timer);
  }, [loading]);
  return slow;
}

interface PanelProps<T> {
  title: string;
  resource: Resource<T>;
  /** What the panel shows once its data is there. */
  children: (value: T) => ReactNode;
  /** Extra controls in the header. */
  actions?: ReactNode;
  className?: string;
  testId?: string;
}

/** The panel. */
export function Panel<T>({ title, resource, children, actions, className, testId }: PanelProps<T>): ReactNode {
  const slow = useSlow(resource.state === 'loading' ? resource : null);
  return (
    <section className={`panel ${className ?? ''}`} aria-label={title} data-testid={testId} data-state={resource.state}>
      <header className="panel-header">
        <h2>{title}</h2>
        {resource.state === 'ready' && resource.refreshing && <span className="dot" aria-label="refreshing" />}
        {actions}
      </header>
      {resource.state === 'loading' && (
        <p className="muted">{slow ? 'Still loading: the server is computing this range, which can take a minute the first time it is asked.' : 'Loading…'}</p>
      )}
      {resource.state === 'error' && (
        <p className="error" role="alert">
          {resource.message}
        </p>
      )}
      {resource.state === 'not-available' && <p className="muted">Not available on this server.</p>}
      {resource.state === 'ready' && children(resource.value)}
    </section>
  );
}
