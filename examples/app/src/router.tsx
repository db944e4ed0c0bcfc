/**
 * A tiny client-side router on `history.pushState`: enough for four pages, no package needed.
 * The client's automatic page tracking sees every `pushState`, so each navigation is a page_view.
 */
import { type AnchorHTMLAttributes, type MouseEvent, type ReactNode, createContext, useContext, useSyncExternalStore } from 'react';

/** A route of the app. */
export interface Route {
  path: string;
  /** Shown in the navigation and set as `document.title` before the URL changes. */
  title: string;
}

/** The app's routes, in navigation order. */
export const ROUTES: readonly Route[] = [
  { path: '/', title: 'Home' },
  { path: '/demo', title: 'Demo' },
  { path: '/events', title: 'Events' },
  { path: '/replay', title: 'Replay' },
];

/** Title of the document for `path`. */
export function titleOf(path: string): string {
  const route = ROUTES.find((r) => r.path === path);
  return `${route?.title ?? 'Not found'} · service-analytics example`;
}

/** A router over one window's history. */
export interface Router {
  subscribe(listener: () => void): () => void;
  /** The current path. */
  path(): string;
  /** Goes to `to` with `pushState` (nothing when already there). */
  navigate(to: string): void;
}

/** Creates the router for `win`; listens to `popstate` for the back and forward buttons. */
export function createRouter(win: Window): Router {
  const listeners = new Set<() => void>();
  const notify = (): void => {
    win.document.title = titleOf(win.location.pathname);
    for (const listener of [...listeners]) listener();
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      if (listeners.size === 1) win.addEventListener('popstate', notify);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) win.removeEventListener('popstate', notify);
      };
    },
    path: () => win.location.pathname,
    navigate(to) {
      if (to === win.location.pathname + win.location.search) return;
      // The title first: the page_view is sent during pushState and carries the title of that moment.
      win.document.title = titleOf(new URL(to, win.location.href).pathname);
      win.history.pushState(null, '', to);
      win.scrollTo(0, 0);
      notify();
    },
  };
}

const RouterContext = createContext<Router | null>(null);

/** Makes `router` available to {@link usePath} and {@link Link}. */
export function RouterProvider({ router, children }: { router: Router; children: ReactNode }): ReactNode {
  return <RouterContext.Provider value={router}>{children}</RouterContext.Provider>;
}

function useRouter(): Router {
  const router = useContext(RouterContext);
  if (router === null) throw new Error('usePath() and <Link> need a <RouterProvider> above them.');
  return router;
}

/** The current path; re-renders on navigation. */
export function usePath(): string {
  const router = useRouter();
  return useSyncExternalStore(router.subscribe, router.path);
}

/** A link that navigates with `pushState`; modified clicks (new tab, …) stay the browser's. */
export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>): ReactNode {
  const router = useRouter();
  const path = usePath();
  const onClick = (event: MouseEvent<HTMLAnchorElement>): void => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    router.navigate(to);
  };
  return (
    <a href={to} onClick={onClick} aria-current={path === to ? 'page' : undefined} {...rest}>
      {children}
    </a>
  );
}
