import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { TopTable } from './top-table.js';

afterEach(cleanup);

const rows = [
  { value: '/pricing', events: 9, visitors: 5 },
  { value: '/', events: 4, visitors: 3 },
  { value: '', events: 2, visitors: 2 },
];

describe('TopTable', () => {
  it('makes each value a button that filters by it, but the empty value and the active one', () => {
    const picked: string[] = [];
    render(createElement(TopTable, { rows, label: 'Page', emptyValue: '(direct)', active: '/', onPick: (v: string) => picked.push(v) }));
    expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual(['/pricing']);
    expect(screen.getByText('(direct)').tagName).toBe('SPAN');
    expect(screen.getByText('/').closest('tr')?.className).toBe('active');
    fireEvent.click(screen.getByRole('button', { name: '/pricing' }));
    expect(picked).toEqual(['/pricing']);
    // A click anywhere on the row, its count too, picks it; the active row's does not.
    fireEvent.click(screen.getByText('5'));
    fireEvent.click(screen.getByText('3'));
    expect(picked).toEqual(['/pricing', '/pricing']);
  });

  it('shows each value as `format` writes it, and filters by the value itself', () => {
    const picked: string[] = [];
    const format = (value: string) => createElement('em', null, `name of ${value}`);
    render(createElement(TopTable, { rows, label: 'Country', format, onPick: (v: string) => picked.push(v) }));
    expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual(['name of /pricing', 'name of /']);
    // The empty value keeps its own text.
    expect(screen.getByText('(none)').tagName).toBe('SPAN');
    fireEvent.click(screen.getByRole('button', { name: 'name of /' }));
    expect(picked).toEqual(['/']);
  });

  it('has no buttons without onPick', () => {
    render(createElement(TopTable, { rows, label: 'Page' }));
    expect(screen.queryAllByRole('button')).toEqual([]);
  });
});
