import { type ReactNode, useEffect, useRef } from 'react';
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import { useAnalytics } from './use-analytics.js';

/** Props of {@link TrackView}. */
export interface TrackViewProps {
  /** Event name sent when the child has been visible long enough. */
  event: string;
  properties?: EventProperties;
  /** Fraction of the child that must be visible, 0–1. @default 0.5 */
  threshold?: number;
  /** How long it must stay visible, ms. @default 0 */
  delay?: number;
  children?: ReactNode;
}

/**
 * Tracks `event` once per mount, when at least `threshold` of the child has been visible for
 * `delay` ms (IntersectionObserver). Renders a `<div>` around the child to observe it. Where
 * IntersectionObserver does not exist, nothing is tracked.
 */
export function TrackView({ event, properties, threshold = 0.5, delay = 0, children }: TrackViewProps): ReactNode {
  const analytics = useAnalytics();
  const ref = useRef<HTMLDivElement>(null);
  const latest = useRef({ event, properties });
  latest.current = { event, properties };

  useEffect(() => {
    const element = ref.current;
    if (element === null || typeof IntersectionObserver === 'undefined') return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let done = false;
    const observer = new IntersectionObserver(
      (entries) => {
        const entry = entries[entries.length - 1];
        const visible = entry !== undefined && entry.isIntersecting && entry.intersectionRatio >= threshold;
        if (!visible) {
          clearTimeout(timer);
          timer = undefined;
          return;
        }
        if (timer !== undefined || done) return;
        timer = setTimeout(() => {
          done = true;
          observer.disconnect();
          analytics.track(latest.current.event, latest.current.properties);
        }, delay);
      },
      { threshold: [threshold] },
    );
    observer.observe(element);
    return () => {
      clearTimeout(timer);
      observer.disconnect();
    };
  }, [analytics, threshold, delay]);

  return <div ref={ref}>{children}</div>;
}
