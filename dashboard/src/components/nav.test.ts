import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { Nav } from './nav.js';

afterEach(cleanup);

describe('Nav, the phone menu', () => {
  it('is a disclosure: the button says whether it is open, focus goes in, Escape closes it and gives focus back', async () => {
    render(createElement(Nav, { current: { page: 'funnels' }, projectId: 'p', onSignOut: () => undefined }));
    const button = screen.getByRole('button', { name: 'Menu' });
    const nav = screen.getByRole('navigation', { name: 'Dashboard' });
    expect(button.getAttribute('aria-expanded')).toBe('false');
    expect(button.getAttribute('aria-controls')).toBe(nav.id);
    await act(async () => fireEvent.click(button));
    expect(button.getAttribute('aria-expanded')).toBe('true');
    expect(nav.className).toBe('open');
    expect(document.activeElement?.textContent).toBe('Funnels');
    await act(async () => fireEvent.keyDown(document, { key: 'Escape' }));
    expect(button.getAttribute('aria-expanded')).toBe('false');
    expect(document.activeElement).toBe(button);
  });

  it('closes when a page is chosen in it', async () => {
    render(createElement(Nav, { current: { page: 'overview' }, projectId: 'p', onSignOut: () => undefined }));
    const button = screen.getByRole('button', { name: 'Menu' });
    await act(async () => fireEvent.click(button));
    await act(async () => fireEvent.click(screen.getByRole('link', { name: 'Experiments' })));
    expect(button.getAttribute('aria-expanded')).toBe('false');
  });
});
