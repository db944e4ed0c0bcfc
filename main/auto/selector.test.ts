/** selectorOf(element): preference order, validity, length cap and stability across re-renders. */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_SELECTOR_LENGTH, selectorOf } from './selector.js';

afterEach(() => {
  document.body.innerHTML = '';
});

const $ = (css: string): Element => document.querySelector(css)!;

describe('selectorOf(element)', () => {
  it('prefers a hand-written id, then a test-id attribute, then a tag path from body', () => {
    document.body.innerHTML = `
      <main><section id="pricing"><div><button>Buy</button></div></section>
      <ul><li data-testid="row"><a>Open</a></li><li><a>Two</a></li></ul>
      <div><p>a</p><p><span>b</span></p></div></main>`;
    expect(selectorOf($('#pricing button'))).toBe('#pricing > div > button');
    expect(selectorOf($('#pricing'))).toBe('#pricing');
    expect(selectorOf($('li[data-testid] a'))).toBe('li[data-testid="row"] > a');
    expect(selectorOf($('li:nth-of-type(2) a'))).toBe('body > main > ul > li:nth-of-type(2) > a');
    expect(selectorOf($('span'))).toBe('body > main > div > p:nth-of-type(2) > span');
  });

  it('makes selectors that find the element again', () => {
    document.body.innerHTML = `<div><div><a></a><a></a></div><div><b data-cy='a "quoted" value'></b><b data-qa="ok-1"></b><i id="x:r1:"></i></div></div>`;
    for (const element of Array.from(document.body.querySelectorAll('*'))) {
      expect(document.querySelector(selectorOf(element))).toBe(element);
    }
  });

  it('skips ids that look generated (React useId, long numbers)', () => {
    document.body.innerHTML = '<div id="app"><span id=":r1:"><b id="ember1234">x</b></span></div>';
    expect(selectorOf($('b'))).toBe('#app > span > b');
  });

  it('uses no classes, so it survives a re-render that changes them', () => {
    const render = (cls: string, extra: string) =>
      (document.body.innerHTML = `<div id="root"><nav class="${cls}">${extra}<button class="${cls}-btn" data-testid="save">Save</button><button class="${cls}">Cancel</button></nav></div>`);
    render('css-1a2b', '');
    const before = [selectorOf($('[data-testid="save"]')), selectorOf($('button:not([data-testid])'))];
    render('css-9z8y is-open', '<span>new badge</span>');
    const after = [selectorOf($('[data-testid="save"]')), selectorOf($('button:not([data-testid])'))];
    expect(after).toEqual(before);
    expect(before).toEqual(['button[data-testid="save"]', '#root > nav > button:nth-of-type(2)']);
  });

  it('keeps a test-id anchored selector when rows are inserted before it', () => {
    document.body.innerHTML = '<ul><li data-testid="checkout"><button>Go</button></li></ul>';
    const before = selectorOf($('button'));
    $('ul').insertAdjacentHTML('afterbegin', '<li>new</li><li>rows</li>');
    expect(selectorOf($('button'))).toBe(before);
  });

  it(`is at most ${MAX_SELECTOR_LENGTH} characters, keeping the steps nearest the element`, () => {
    document.body.innerHTML = `${'<div><p></p>'.repeat(60)}<em>deep</em>${'</div>'.repeat(60)}`;
    const selector = selectorOf($('em'));
    expect(selector.length).toBeLessThanOrEqual(MAX_SELECTOR_LENGTH);
    expect(selector.endsWith('div > em')).toBe(true);
  });
});
