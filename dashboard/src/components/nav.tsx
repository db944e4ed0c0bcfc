/**
 * The dashboard's navigation and sign-out. On a phone the links collapse behind a "Menu" button
 * (a disclosure: `aria-expanded`, `aria-controls`): opening it moves focus to the current page's
 * link, Escape closes it and gives focus back to the button, a tap outside or Tab past its last
 * link closes it, and choosing a page closes it. Which of the two layouts shows is the stylesheet's decision (one width breakpoint).
 */
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { type Access, mayOpen } from '../lib/access.js';
import { type Route, routeHref } from '../lib/route.js';

const LINKS: ReadonlyArray<{ route: Route; label: string }> = [
  { route: { page: 'overview' }, label: 'Overview' },
  { route: { page: 'live' }, label: 'Live' },
  { route: { page: 'errors' }, label: 'Errors' },
  { route: { page: 'vitals' }, label: 'Web vitals' },
  { route: { page: 'funnels' }, label: 'Funnels' },
  { route: { page: 'experiments' }, label: 'Experiments' },
  { route: { page: 'heatmaps' }, label: 'Heatmaps' },
  { route: { page: 'sessions' }, label: 'Sessions' },
  { route: { page: 'admin' }, label: 'Admin' },
];

const NAV_ID = 'dashboard-nav';

/**
 * The bar at the top: the pages `access` may open (no link to what the server would refuse), and
 * `identity` on the right (who is signed in, the project, sign-out: `identity-bar.tsx`).
 */
export function Nav({ current, access, identity }: { current: Route; access: Access; identity: ReactNode }): ReactNode {
  const active = current.page === 'replay' ? 'sessions' : current.page;
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const nav = useRef<HTMLElement>(null);
  const here = routeHref(current);

  // A new page closes the menu (a link chosen in it, or Back).
  useEffect(() => setOpen(false), [here]);

  useEffect(() => {
    if (!open) return;
    const links = nav.current?.querySelectorAll<HTMLAnchorElement>('a');
    (nav.current?.querySelector<HTMLAnchorElement>('a[aria-current="page"]') ?? links?.[0])?.focus();
    const close = (): void => {
      setOpen(false);
      button.current?.focus();
    };
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') close();
    };
    const onPointer = (event: PointerEvent): void => {
      const target = event.target as Node | null;
      if (target !== null && !nav.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    // Tabbing out of the last link leaves the menu: it closes rather than cover the page under it.
    const onFocusOut = (event: FocusEvent): void => {
      const next = event.relatedTarget as Node | null;
      if (next !== null && !nav.current?.contains(next) && !button.current?.contains(next)) setOpen(false);
    };
    const menu = nav.current;
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    menu?.addEventListener('focusout', onFocusOut);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
      menu?.removeEventListener('focusout', onFocusOut);
    };
  }, [open]);

  return (
    <header className="topbar">
      <button ref={button} type="button" className="menu-button" aria-expanded={open} aria-controls={NAV_ID} onClick={() => setOpen(!open)}>
        <span className="menu-icon" aria-hidden="true" />
        Menu
      </button>
      <span className="brand">service-analytics</span>
      <nav id={NAV_ID} ref={nav} aria-label="Dashboard" className={open ? 'open' : undefined}>
        {LINKS.filter((l) => mayOpen(access, l.route.page)).map((l) => (
          <a
            key={l.label}
            href={routeHref(l.route)}
            aria-current={l.route.page === active ? 'page' : undefined}
            // The same page chosen again changes no hash; it still closes the menu.
            onClick={() => setOpen(false)}
          >
            {l.label}
          </a>
        ))}
      </nav>
      {identity}
    </header>
  );
}
