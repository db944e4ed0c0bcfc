/** Keeps one broken part of the page from blanking the whole app, and says what broke. */
import { Component, type ErrorInfo, type ReactNode } from 'react';

/** Props of {@link ErrorBoundary}. */
export interface ErrorBoundaryProps {
  /** What the part is, for the message ("the funnel demo"). */
  name: string;
  children?: ReactNode;
}

/** Renders the children, or a short message once one of them threw while rendering. */
export class ErrorBoundary extends Component<ErrorBoundaryProps, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: unknown): { error: Error } {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error(`${this.props.name} crashed`, error, info.componentStack);
  }

  override render(): ReactNode {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="card" role="alert">
        <p className="error">
          {this.props.name} crashed: {this.state.error.message}
        </p>
      </div>
    );
  }
}
