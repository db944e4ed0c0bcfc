import { type MouseEvent, type ReactElement, type ReactNode, cloneElement, isValidElement } from 'react';
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import { useAnalytics } from './use-analytics.js';

/** Props of {@link TrackClick}. */
export interface TrackClickProps {
  /** Event name sent on each click. */
  event: string;
  properties?: EventProperties;
  children?: ReactNode;
}

type Clickable = ReactElement<{ onClick?: (event: MouseEvent) => void }>;

/**
 * Tracks `event` on every click of the child. A single element child keeps its own `onClick`
 * and gets no wrapper; anything else is wrapped in a `<span>`.
 */
export function TrackClick({ event, properties, children }: TrackClickProps): ReactNode {
  const analytics = useAnalytics();
  const track = (): void => analytics.track(event, properties);
  if (isValidElement(children)) {
    const child = children as Clickable;
    return cloneElement(child, {
      onClick: (e: MouseEvent) => {
        child.props.onClick?.(e);
        track();
      },
    });
  }
  return <span onClick={track}>{children}</span>;
}
