/**
 * The explorer links of the API's answers (issue 26 item 4; lib/explorer.ts has the rule and the builder): every
 * JSON answer under /api/v1 gets, next to each signature, mint and linked address field, its Solana Explorer URL for
 * the configured cluster (`explorer_url`, `x_explorer_url`, `x_mint_explorer_url`), added in this one place so a
 * handler cannot forget one; problem bodies too (`chain_transaction`, `needed[].mint`: http/problem.ts reads the
 * builder from `res.locals.explorer`).
 *
 * Events carry them too (the envelope's `signature` -> `explorer_url`, and the resource in `data`), added when an event
 * is read (GET /events: here), streamed or delivered to a webhook (events.repo.ts `toEventDto`), never stored: a payload
 * is the resource as the API renders it, and a link follows the operator's current RPC settings. Exempt (documented in
 * the contract, common.ts `EXPLORER_LINKS_DOC`): the audit log, whose entries' hashes cover every field of an entry
 * (a client recomputes them); build those links from GET /network's templates.
 */
import type { RequestHandler, Response } from 'express';
import { API_PREFIX } from '@bazaar/contract';
import { withExplorerLinks, type Explorer } from '../lib/explorer.js';

const EXEMPT = [new RegExp(`^${API_PREFIX}/admin/audit-log(/|$)`)];

/** Does the answer to `path` get explorer links? (every /api/v1 path but the exempt ones) */
export function linksExplorer(path: string): boolean {
  return path.startsWith(`${API_PREFIX}/`) && !EXEMPT.some((r) => r.test(path));
}

/** The explorer of this response, when its answer gets links (set by `explorerLinks`). */
export function explorerOf(res: Response): Pick<Explorer, 'explorerUrl'> | undefined {
  return (res.locals as { explorer?: Explorer }).explorer;
}

/** Express middleware: wraps `res.json` of the answers that get links (see the module comment). */
export function explorerLinks(explorer: Explorer): RequestHandler {
  return (req, res, next) => {
    if (!linksExplorer(req.path)) return next();
    (res.locals as { explorer?: Explorer }).explorer = explorer;
    const json = res.json.bind(res);
    res.json = (body?: unknown) => json(withExplorerLinks(body, explorer));
    next();
  };
}
