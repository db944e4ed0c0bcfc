import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { Nav } from './nav.js';

afterEach(cleanup);

describe('Nav, the phone menu', () => {
  it('is a disclosure: the button says whether it is open, focus goes in, Escape closes it and gives focus back', async () => {
    render(createElement(Nav, { current: { page: 'funnels' }, access: 'viewer', identity: null }));
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
    render(createElement(Nav, { current: { page: 'overview' }, access: 'viewer', identity: null }));
    const button = screen.getByRole('button', { name: 'Menu' });
    await act(async () => fireEvent.click(button));
    await act(async () => fireEvent.click(screen.getByRole('link', { name: 'Experiments' })));
    expect(button.getAttribute('aria-expanded')).toBe('false');
  });
});

describe('Nav, by who looks', () => {
  const pages = () => screen.getAllByRole('link').map((a) => a.textContent);
  it('links a shared view to the reports only, a viewer to all but Admin, an admin to all', () => {
    const { unmount } = render(createElement(Nav, { current: { page: 'overview' }, access: 'link', identity: null }));
    expect(pages()).toEqual(['Overview', 'Errors', 'Web vitals', 'Funnels', 'Experiments', 'Heatmaps']);
    unmount();
    const viewer = render(createElement(Nav, { current: { page: 'overview' }, access: 'viewer', identity: null }));
    expect(pages()).not.toContain('Admin');
    expect(pages()).toContain('Sessions');
    viewer.unmount();
    render(createElement(Nav, { current: { page: 'overview' }, access: 'admin', identity: null }));
    expect(pages()).toContain('Admin');
  });
});
