/**
 * The dispute desk's terms that the orders contract needs too (the reason codes of an open-dispute body, the
 * rationale's bounds): a leaf module with no contract imports, so orders.contract.ts and disputes.contract.ts
 * can both use it without an import cycle. Documented in disputes.contract.ts.
 */
import { z } from 'zod';

/** Why a party opens a dispute (with `reason` as free text). `other`: anything else, and clients that send text only. */
export const DISPUTE_REASON_CODES = ['not_delivered', 'not_as_described', 'late', 'quality', 'other'] as const;
export const DisputeReasonCode = z
  .enum(DISPUTE_REASON_CODES)
  .describe(
    'not_delivered: nothing was delivered; not_as_described: the delivery is not what the listing or offer said; late: ' +
      'delivered after the deadline; quality: delivered but not usable; other: anything else (the default when only `reason` is sent)',
  );
export type DisputeReasonCode = z.infer<typeof DisputeReasonCode>;

/** Bounds of evidence and rulings (the server and the web app share them). */
export const DISPUTE_LIMITS = {
  /** submissions per party per dispute */
  submissionsPerParty: 10,
  /** files (links) per submission */
  filesPerSubmission: 10,
  textMaxLength: 5000,
  fileUrlMaxLength: 2048,
  fileNameMaxLength: 200,
  /** bytes a linked file may declare (100 MiB) */
  fileMaxBytes: 104_857_600,
  rationaleMinLength: 20,
  /** so the chat message carrying it (with a one-line heading) stays within a message's 4000 characters */
  rationaleMaxLength: 3800,
  /** the order's messages a queue entry carries (the newest ones, oldest first) */
  caseMessages: 50,
} as const;

/** Defaults of the DISPUTE_* settings. */
export const DISPUTE_DEFAULTS = { evidenceHours: 72, attentionHours: 96 } as const;

