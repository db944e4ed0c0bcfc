/** The server's version, as its package.json says (a test keeps them equal); `--version` prints it. */
export const SERVER_VERSION = '0.1.0';
