import type { ParameterizedContext } from 'koa';
import { HttpError } from '../http-error.js';

/** A query parameter given at most once and at most 512 characters long; 400 `VALIDATION_ERROR` otherwise. */
export function param(ctx: ParameterizedContext, name: string): string | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new HttpError('VALIDATION_ERROR', `Give "${name}" at most once.`);
  if (value.length > 512) throw new HttpError('VALIDATION_ERROR', `"${name}" is too long.`);
  return value;
}

/** A time parameter: ISO 8601 or milliseconds since the epoch; 400 `VALIDATION_ERROR` otherwise. */
export function parseTime(name: string, raw: string): number {
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(ms)) throw new HttpError('VALIDATION_ERROR', `"${name}" must be an ISO 8601 time or milliseconds since the epoch.`);
  return ms;
}
