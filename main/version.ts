/** Name and version of this library, sent in each event's context. */
export const LIBRARY = { name: 'service-analytics', version: '0.1.0' } as const;
