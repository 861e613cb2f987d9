/**
 * Agreements between the parties of an escrow unit (issue 24 items 2-4): revisions, deadline extensions,
 * settlement by agreement, and the expiry of proposals. One use case per file; the orders facade composes them.
 */
export { revisions, type Revisions } from './revisions.js';
export { extensions, type Extensions } from './extensions.js';
export { settlements, type Settlements } from './settlements.js';
export { expireProposals } from './expire-proposals.js';
