/**
 * docs/deploy.md's recipes as the tests run them: a server started from the systemd unit's own
 * command line and `Environment=` lines (its paths moved into a temporary directory), and the nginx
 * site in front of it with a certificate made here (`openssl`), its `listen` on 127.0.0.1.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type Nginx, startNginxWith } from '../nginx.js';
import { runCli } from './cli-process.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/** A file of the repository, as text. */
export const repositoryFile = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** The unit's `Environment=` settings, `ExecStart=` command line and `WorkingDirectory=`. */
export function unitOf(text: string): { env: Record<string, string>; exec: string[]; workingDirectory: string } {
  const env: Record<string, string> = {};
  let exec: string[] = [];
  let workingDirectory = '';
  for (const line of text.split('\n')) {
    const environment = /^Environment=([A-Z_]+)=(.*)$/.exec(line);
    if (environment) env[environment[1] as string] = environment[2] as string;
    if (line.startsWith('ExecStart=')) exec = line.slice('ExecStart='.length).split(' ');
    if (line.startsWith('WorkingDirectory=')) workingDirectory = line.slice('WorkingDirectory='.length);
  }
  return { env, exec, workingDirectory };
}

/** A server started as the unit starts it. */
export interface UnitServer {
  child: ChildProcess;
  /** Where it listens, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Its environment, the unit's with the state directory moved and port 0. */
  env: Record<string, string>;
  project: { projectId: string; writeKey: string; readKey: string };
  /** Everything it logged so far. */
  log(): string;
}

/**
 * Creates a project and starts the server from deploy/service-analytics.service with `cli` in place
 * of the installed CLI, its state directory under `dir`.
 */
export async function startUnitServer(cli: string, dir: string): Promise<UnitServer> {
  const unit = unitOf(repositoryFile('deploy/service-analytics.service'));
  const state = join(dir, 'state');
  mkdirSync(state, { recursive: true });
  const env = Object.fromEntries(Object.entries(unit.env).map(([name, value]) => [name, value.replaceAll(unit.workingDirectory, state)]));
  env.SA_PORT = '0';
  const created = await runCli(cli, ['project', 'create', '--name', 'Deployed', '--bots', 'keep', '--json'], env);
  if (created.code !== 0) throw new Error(`project create failed: ${created.stderr}`);
  const project = JSON.parse(created.stdout) as UnitServer['project'];
  const child = spawn(process.execPath, [cli, ...unit.exec.slice(2)], { cwd: state, env: { ...process.env, ...env } });
  let log = '';
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line:\n${log}`)), 20_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const match = /"msg":"listening","address":"([^"]+)"/.exec(log);
      if (match?.[1]) {
        clearTimeout(timer);
        resolvePromise(match[1]);
      }
    });
  });
  return { child, url, env, project, log: () => log };
}

/** The nginx site of deploy/nginx-site.conf in front of `upstream`, TLS with a certificate for 127.0.0.1. */
export async function startNginxSite(upstream: string, dir: string): Promise<{ nginx: Nginx; base: string; ca: string }> {
  const key = join(dir, 'site.key');
  const cert = join(dir, 'site.pem');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert]);
  const site = repositoryFile('deploy/nginx-site.conf');
  const nginx = await startNginxWith((port) =>
    site
      .replace('listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`)
      .replace('/etc/ssl/certs/analytics.example.com.pem', cert)
      .replace('/etc/ssl/private/analytics.example.com.key', key)
      .replace('http://127.0.0.1:8787', upstream),
  );
  return { nginx, base: `https://127.0.0.1:${nginx.port}`, ca: readFileSync(cert, 'utf8') };
}
