import fc from 'fast-check';
import { is } from 'superstruct';
import { describe, expect, it } from 'vitest';
import { RecordingUploadStruct, explainInvalidRecording, isRecordingUpload, recordedDataProblem } from './recording.js';

const chunk = {
  events: [{ type: 2, data: { node: {} }, timestamp: 1700000000000 }, { type: 3, data: null, timestamp: 1700000000001, delay: 5 }],
  duration: 12.5,
  start_url: 'https://example.com/',
  user_id: 'u1',
  is_final: false,
  event_offset: 40,
};

describe('isRecordingUpload(value)', () => {
  it('accepts a chunk, and one with only the required fields', () => {
    expect(isRecordingUpload(chunk)).toBe(true);
    expect(isRecordingUpload({ events: [], duration: 0, event_offset: 0 })).toBe(true);
  });

  it.each([
    ['a fractional offset', { ...chunk, event_offset: 1.5 }, 'event_offset'],
    ['a negative duration', { ...chunk, duration: -1 }, 'duration'],
    ['a string is_final', { ...chunk, is_final: 'yes' }, 'is_final'],
    ['an event without a timestamp', { ...chunk, events: [{ type: 1, data: {} }] }, 'events.0.timestamp'],
    ['an infinite duration', JSON.parse('{"events":[],"duration":1e999,"event_offset":0}'), 'duration'],
    ['an infinite delay', { ...chunk, events: [{ type: 3, data: {}, timestamp: 1, delay: Number.POSITIVE_INFINITY }] }, 'events.0.delay'],
    ['an infinite number deep in data', JSON.parse('{"events":[{"type":3,"data":{"a":[1,{"b":-1e999}]},"timestamp":1}],"duration":0,"event_offset":0}'), 'events.0.data: a number is not finite'],
    ['an infinite number as data', JSON.parse('{"events":[{"type":3,"data":1e999,"timestamp":1}],"duration":0,"event_offset":0}'), 'events.0.data'],
    ['data nested too deep', { ...chunk, events: [{ type: 3, data: JSON.parse('['.repeat(501) + ']'.repeat(501)), timestamp: 1 }] }, 'events.0.data: nested deeper than 500'],
  ])('refuses %s and names the field', (_name, value, field) => {
    expect(isRecordingUpload(value)).toBe(false);
    expect(explainInvalidRecording(value)).toMatch(new RegExp(`^${field.replace(/\./g, '\\.')}`));
  });

  // Inputs come from JSON.parse, which never makes null-prototype objects: generate none.
  it('agrees with the detailed struct on generated input', () => {
    const event = fc.record(
      { type: fc.oneof(fc.integer(), fc.double(), fc.string()), data: fc.jsonValue(), timestamp: fc.oneof(fc.double(), fc.string()), delay: fc.oneof(fc.double(), fc.string()) },
      { requiredKeys: [], noNullPrototype: true },
    );
    const upload = fc.record(
      {
        events: fc.oneof(fc.array(event, { maxLength: 3 }), fc.string()),
        duration: fc.oneof(fc.double(), fc.string()),
        start_url: fc.oneof(fc.string(), fc.constant(null), fc.integer()),
        user_id: fc.oneof(fc.string({ maxLength: 3 }), fc.constant(null)),
        is_final: fc.oneof(fc.boolean(), fc.integer()),
        event_offset: fc.oneof(fc.integer(), fc.double()),
      },
      { requiredKeys: [], noNullPrototype: true },
    );
    fc.assert(fc.property(upload, (u) => isRecordingUpload(u) === is(u, RecordingUploadStruct)), { numRuns: 2000 });
  });
});

describe('recordedDataProblem(data, maxDepth)', () => {
  it('measures nesting of objects and arrays without recursion', () => {
    expect(recordedDataProblem({ a: [1, { b: 2 }] }, 3)).toBeNull();
    expect(recordedDataProblem({ a: [1, { b: {} }] }, 3)).toBe('nested deeper than 3 levels');
    expect(recordedDataProblem(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)), 500)).toBe('nested deeper than 500 levels');
  });
  it('finds a number that is not finite at any depth, and passes scalars and null', () => {
    expect(recordedDataProblem(JSON.parse('{"a":[{"b":[1e999]}]}'), 500)).toBe('a number is not finite');
    expect(recordedDataProblem(Number.NaN, 500)).toBe('a number is not finite');
    expect(recordedDataProblem(null, 500)).toBeNull();
    expect(recordedDataProblem('text', 500)).toBeNull();
    expect(recordedDataProblem({ n: 1.5e308 }, 500)).toBeNull();
  });
});
