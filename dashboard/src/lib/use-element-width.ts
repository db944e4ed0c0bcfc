/** The width of an element in CSS pixels, kept current with a ResizeObserver. */
import { type RefObject, useEffect, useState } from 'react';

/** `fallback` until the element is measured. */
export function useElementWidth(ref: RefObject<HTMLElement | null>, fallback: number): number {
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (element === null || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => setWidth(Math.max(200, Math.round(element.clientWidth))));
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref, fallback]);
  return width;
}
