import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { parseViewState } from '../lib/view-state.js';
import { FilterChips } from './filter-chips.js';

afterEach(cleanup);

describe('FilterChips', () => {
  it('shows one chip per filter; its button removes that filter alone', () => {
    const view = parseViewState('?range=30d&device=mobile&page=%2Fpricing');
    const next: unknown[] = [];
    render(createElement(FilterChips, { view, onChange: (v: unknown) => next.push(v) }));
    expect(screen.getAllByTestId('filter-chip').map((c) => c.textContent?.replace('×', '').trim())).toEqual(['Page: /pricing', 'Device: mobile']);
    fireEvent.click(screen.getByRole('button', { name: 'Remove filter Device: mobile' }));
    expect(next).toEqual([{ ...view, filters: { page: '/pricing' } }]);
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(next[1]).toEqual({ ...view, filters: {} });
  });

  it('names a country by its flag and name, and removes it by its code', () => {
    const view = parseViewState('?country=GB');
    const next: unknown[] = [];
    render(createElement(FilterChips, { view, onChange: (v: unknown) => next.push(v) }));
    expect(screen.getByTestId('filter-chip').textContent?.replace('×', '').trim()).toBe('Country: 🇬🇧 United Kingdom (GB)');
    fireEvent.click(screen.getByRole('button', { name: 'Remove filter Country: GB' }));
    expect(next).toEqual([{ ...view, filters: {} }]);
  });

  it('shows nothing without filters', () => {
    const { container } = render(createElement(FilterChips, { view: parseViewState(''), onChange: () => undefined }));
    expect(container.innerHTML).toBe('');
  });
});
