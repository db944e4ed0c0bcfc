/** How the dashboard writes numbers, shares, durations and times. */

/** `1,234` (the reader's locale), `—` for null. */
export function formatCount(n: number | null): string {
  return n === null ? '—' : Math.round(n).toLocaleString('en-US');
}

/** A count with its noun: `1 session`, `2 sessions`, `1,234 sessions`. */
export function formatCountOf(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A share of 0..1 as `42.5%`, `—` for null. */
export function formatPercent(share: number | null): string {
  if (share === null || !Number.isFinite(share)) return '—';
  const pct = share * 100;
  return `${pct >= 10 || pct === 0 ? pct.toFixed(0) : pct.toFixed(1)}%`;
}

/** A duration in ms as `45s`, `3m 05s`, `1h 02m`; `—` for null. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** A player position in ms as `m:ss`. */
export function formatClock(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** A web-vital value: CLS unitless with 3 decimals, the others in ms (`1.24 s` from a second). */
export function formatVital(metric: 'lcp' | 'inp' | 'cls' | 'fcp', value: number | null): string {
  if (value === null) return '—';
  if (metric === 'cls') return value.toFixed(3);
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

/** An ISO time as local `14:03:27`, or the text itself when it is not a time. */
export function formatTime(iso: string | null): string {
  if (iso === null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString('en-GB', { hour12: false });
}

/** An ISO time as local `25 Nov 14:03`. */
export function formatDateTime(iso: string | null): string {
  if (iso === null) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short' })} ${date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false })}`;
}

/** The label of a chart bucket: `14:00` for hours, `25 Nov` for days. */
export function formatBucket(iso: string | null, interval: 'hour' | 'day' | 'minute'): string {
  if (iso === null) return '';
  const date = new Date(iso);
  if (interval === 'day') return date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
  return date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false });
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
