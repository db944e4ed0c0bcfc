/** The steps of a funnel as the dashboard builds them and the funnel report takes them. */

/** One step: an event type, or a page view of a path. */
export interface FunnelStep {
  kind: 'event' | 'page';
  value: string;
}

/** At least this many steps make a funnel; the server takes at most the maximum. */
export const MIN_STEPS = 2;
export const MAX_STEPS = 10;

/** The `step` parameter of a step: `event:signup`, `page:/pricing`. */
export function stepParam(step: FunnelStep): string {
  return `${step.kind}:${step.value}`;
}

/** A step from a picker's option value (the same text as {@link stepParam}); null if malformed. */
export function parseStep(text: string): FunnelStep | null {
  const match = /^(event|page):(.+)$/s.exec(text);
  if (match === null) return null;
  return { kind: match[1] === 'page' ? 'page' : 'event', value: match[2] ?? '' };
}

/** How a step reads in a list: `Page /pricing`, `Event signup`. */
export function stepLabel(step: FunnelStep): string {
  return `${step.kind === 'page' ? 'Page' : 'Event'} ${step.value}`;
}

/** `steps` with `step` appended, unless it would exceed the maximum. */
export function addStep(steps: readonly FunnelStep[], step: FunnelStep): FunnelStep[] {
  return steps.length >= MAX_STEPS ? [...steps] : [...steps, step];
}

/** `steps` without the one at `index`. */
export function removeStep(steps: readonly FunnelStep[], index: number): FunnelStep[] {
  return steps.filter((_, k) => k !== index);
}
