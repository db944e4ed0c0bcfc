// The part of ua-parser-js 1.x (which ships no declarations) that server/reports/user-agent.ts uses.
declare module 'ua-parser-js' {
  interface UAParserResult {
    browser: { name?: string; version?: string };
    os: { name?: string; version?: string };
    device: { type?: string; vendor?: string; model?: string };
  }
  interface UAParserInstance {
    getResult(): UAParserResult;
  }
  const UAParser: new (userAgent?: string) => UAParserInstance;
  export default UAParser;
}
