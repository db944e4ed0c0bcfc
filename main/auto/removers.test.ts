/** createRemovers(): one stop runs every remover; guarded callbacks never throw. */
import { describe, expect, it } from 'vitest';
import { SILENT } from '../logger.js';
import { createRemovers } from './removers.js';

describe('createRemovers(log, what)', () => {
  it('runs every remover once on stop, a throwing one not skipping the rest', () => {
    const logged: string[] = [];
    const r = createRemovers({ ...SILENT, error: (message) => logged.push(message) }, 'feature');
    const ran: number[] = [];
    r.add(() => ran.push(1));
    r.add(() => {
      throw new Error('cannot');
    });
    r.add(() => ran.push(3));
    r.stop();
    r.stop();
    expect(ran).toEqual([1, 3]);
    expect(logged).toEqual(['feature: a listener could not be removed']);
  });

  it('removes a listener with the options it was added with', () => {
    const r = createRemovers(SILENT, 'feature');
    const seen: string[] = [];
    r.listen(document, 'click', (event) => seen.push(event.type), { capture: true, passive: true });
    document.body.click();
    r.stop();
    document.body.click();
    expect(seen).toEqual(['click']);
  });
});
