import { cleanup, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeNote } from './change-note.js';

afterEach(cleanup);

describe('ChangeNote', () => {
  it('shows the arrow and size, says the sentence to a screen reader, and colours by good or bad news', () => {
    render(createElement(ChangeNote, { change: { kind: 'points', value: 3 }, good: 'down', period: 'the previous 7 days', testId: 'note' }));
    const note = screen.getByTestId('note');
    expect(note.querySelector('[aria-hidden="true"]')?.textContent).toBe('▲ 3 pp');
    expect(note.querySelector('.visually-hidden')?.textContent).toBe('up 3 percentage points from the previous 7 days');
    expect(note.className).toBe('stat-change bad');
    expect(note.title).toBe('up 3 percentage points from the previous 7 days');
  });

  it('keeps its line, empty and hidden from screen readers, while the previous period loads', () => {
    render(createElement(ChangeNote, { change: null, good: 'up', period: 'the previous 7 days', testId: 'note' }));
    const note = screen.getByTestId('note');
    expect(note.textContent).toBe('');
    expect(note.getAttribute('aria-hidden')).toBe('true');
    expect(note.className).toBe('stat-change');
  });
});
