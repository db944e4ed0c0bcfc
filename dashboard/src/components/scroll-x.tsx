/**
 * A box for a table that may be wider than its panel on a phone: it scrolls sideways, shows a
 * shadow on each side that has more to see (`.scroll-x` in styles.css), and can be scrolled from
 * the keyboard (a focusable region named for its table).
 */
import type { ReactNode } from 'react';

export function ScrollX({ label, children }: { label: string; children: ReactNode }): ReactNode {
  return (
    <div className="scroll-x" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
