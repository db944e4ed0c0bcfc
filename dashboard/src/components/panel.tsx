/** A titled card that shows its resource's loading, error and "not available" states itself. */
import type { ReactNode } from 'react';
import type { Resource } from '../lib/use-resource.js';

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
  return (
    <section className={`panel ${className ?? ''}`} aria-label={title} data-testid={testId} data-state={resource.state}>
      <header className="panel-header">
        <h2>{title}</h2>
        {resource.state === 'ready' && resource.refreshing && <span className="dot" aria-label="refreshing" />}
        {actions}
      </header>
      {resource.state === 'loading' && <p className="muted">Loading…</p>}
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
