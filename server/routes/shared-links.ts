import type { Middleware } from 'koa';
import { generateSharedLink, sharedLinkPath } from '../auth/shared-link-token.js';
import { createBodyReader } from '../body.js';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import type { SharedLink } from '../store/account-store.js';
import { readJsonObject, stringField } from './json-object-body.js';
import type { RouteContext } from './route-context.js';

/*
 * A project's read-only shared links (docs/protocol.md, "Shared links"): listed, made and revoked
 * by an admin account or an admin key. The token is answered once, when the link is made; the
 * store keeps its hash.
 */

const readSmallBody = createBodyReader(16 * 1024);

const linkToWire = (l: SharedLink) => ({
  id: l.id,
  name: l.name,
  prefix: l.prefix,
  created_at: new Date(l.createdAt).toISOString(),
  created_by: l.createdBy,
  revoked_at: l.revokedAt === null ? null : new Date(l.revokedAt).toISOString(),
});

/** `GET /api/v1/links`: the project's links, revoked ones too, oldest first. */
export function listLinksRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'admin', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    ctx.body = { links: (await rc.store.listSharedLinks(caller.project.id)).map(linkToWire) };
  };
}

/**
 * `POST /api/v1/links` with an optional `{ name }`: 201 with the link, its token and its address
 * in the dashboard (the token after `#`, so that no request and no server log carries it).
 */
export function createLinkRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'admin', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const body = await readJsonObject(ctx, readSmallBody);
    const name = stringField(body, 'name', { max: 200, optional: true }).trim();
    const createdBy = caller.principal.via === 'session' ? caller.principal.account.id : null;
    const { token, link } = generateSharedLink(caller.project.id, { name, createdBy, now: rc.now() });
    await rc.store.createSharedLink(link);
    rc.logger.info('shared link created', { projectId: caller.project.id, linkId: link.id });
    ctx.status = 201;
    ctx.body = { link: linkToWire(link), token, path: sharedLinkPath(rc.basePath, token) };
  };
}

/** `DELETE /api/v1/links/:linkId`: the link stops working at once; 404 when the project has no such live link. */
export function revokeLinkRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'admin', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const linkId = String(ctx.params?.linkId ?? '');
    if (!(await rc.store.revokeSharedLink(caller.project.id, linkId, rc.now()))) throw new HttpError('NOT_FOUND', `No live link ${linkId} in this project.`);
    rc.logger.info('shared link revoked', { projectId: caller.project.id, linkId });
    ctx.body = { success: true };
  };
}
