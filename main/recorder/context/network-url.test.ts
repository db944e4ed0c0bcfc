import { describe, expect, it } from 'vitest';
import { allowListTest, ownUploadTest, redactUrl } from './network-url.js';

describe('redactUrl(raw, base, allowQueryParams)', () => {
  it('makes the URL absolute, removes credentials and fragment, and redacts every query value not allowed', () => {
    expect(redactUrl('/search?q=flu+shots&page=2&flag#access_token=abc', 'https://shop.example/a/b', new Set(['page']))).toBe(
      'https://shop.example/search?q=[redacted]&page=2&flag',
    );
    expect(redactUrl('https://user:pass@api.example/x?token=t', 'https://shop.example/', new Set())).toBe('https://api.example/x?token=[redacted]');
  });

  it('keeps a value that is not a URL up to its query', () => {
    expect(redactUrl('http://[bad?secret=1', 'not a base', new Set())).toBe('http://[bad');
  });
});

describe('ownUploadTest(endpoint) and allowListTest(allowUrls)', () => {
  it("knows the client's own batch, beacon and recording uploads, and nothing else of the endpoint", () => {
    const own = ownUploadTest('https://analytics.example');
    expect(own('https://analytics.example/api/v1/events/batch')).toBe(true);
    expect(own('https://analytics.example/api/v1/events/batch?api_key=k&project_id=p')).toBe(true);
    expect(own('https://analytics.example/api/v1/sessions/s1/recordings')).toBe(true);
    expect(own('https://analytics.example/api/v1/events?limit=10')).toBe(false);
    expect(own('/api/v1/events/batch')).toBe(false);
  });

  it('matches a string as a prefix and a RegExp by test', () => {
    const allowed = allowListTest(['https://api.example/search', /\/graphql$/g]);
    expect(allowed('https://api.example/search?q=1')).toBe(true);
    expect(allowed('https://shop.example/graphql')).toBe(true);
    expect(allowed('https://shop.example/graphql')).toBe(true);
    expect(allowed('https://api.example/account')).toBe(false);
  });
});
