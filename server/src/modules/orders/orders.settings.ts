/**
 * The orders module's settings: ONE type, owned here. Values come from the environment through
 * `server/src/config.ts` (`ordersSettings`, ORDER_* and SOLANA_PAY_*); their defaults live only in the
 * ENV_VARS table of config.ts, nowhere in this module (tests build them from the same table:
 * `ordersSettings({}, baseUrl)`). The contract's prose that states these defaults ("15 minutes",
 * "120 s") is checked against that table by tests/orders.settings.test.ts.
 */

/** ORDER_* and SOLANA_PAY_* (see ENV_VARS in server/src/config.ts for each variable and its default). */
export interface OrdersSettings {
  /** ORDER_PAYMENT_TTL_SECONDS: payment window, seconds (payment_expires_at = created_at + this) */
  paymentTtlSeconds: number;
  /** ORDER_REVIEW_WINDOW_SECONDS: escrow review window after delivery, seconds (auto-release after it) */
  reviewWindowSeconds: number;
  /** ORDER_MAX_UNPAID_PER_BUYER: unpaid (awaiting_payment) orders a buyer may hold at once */
  maxUnpaidOrdersPerBuyer: number;
  /** ORDER_MAX_UNPAID_PER_IP: unpaid orders one client network (IPv4 address / IPv6 /64) may hold at once; API keys are not counted */
  maxUnpaidOrdersPerIp: number;
  /** ORDER_PAYMENT_TTL_CONTESTED_SECONDS: payment window of an order on a contested listing or from a pressed network, seconds */
  contestedPaymentTtlSeconds: number;
  /** ORDER_HOLD_COOLDOWN_SECONDS: after a wallet order's window closed unpaid, its buyer may not order that listing again for this long, seconds (0 = none) */
  holdCooldownSeconds: number;
  /** ORDER_EXTENSION_PROPOSAL_TTL_SECONDS: a seller's deadline-extension proposal lapses after this, seconds (service clock) */
  extensionProposalTtlSeconds: number;
  /** ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS: a settlement proposal lapses after this, seconds (chain clock; at most 7 days) */
  settlementProposalTtlSeconds: number;
  /** ORDER_WATCHER_INTERVAL_MS: payment watcher + crank interval, ms; 0 = off (the watcher's pace while it has no live subscription) */
  watcherIntervalMs: number;
  /** ORDER_WATCHER_FALLBACK_INTERVAL_MS: payment watcher full-pass interval while its order-account subscription is live, ms */
  watcherFallbackIntervalMs: number;
  /** ORDER_RECONCILE_INTERVAL_MS: reconciler interval, ms; 0 = start-up pass only */
  reconcileIntervalMs: number;
  /** ORDER_INFLIGHT_WAIT_MS: how long a call waits for another process's in-flight action on the same order before 409, ms */
  inflightWaitMs: number;
  /** ORDER_IDEMPOTENCY_LEASE_MS: lease of a running POST /orders Idempotency-Key, ms (a key whose request died is retryable after it) */
  idempotencyLeaseMs: number;
  /** SOLANA_PAY_LABEL: label of the Solana Pay transaction request */
  solanaPayLabel: string;
  /** SOLANA_PAY_ICON: absolute URL of an SVG/PNG/WebP icon (default `publicBaseUrl/icon.svg`) */
  solanaPayIcon: string;
}

/**
 * What the orders service reads: the settings, the service's public base URL (PUBLIC_BASE_URL, used in
 * Solana Pay links) and, for tests only, another payment grace than the contract's
 * `PAYMENT_GRACE_SECONDS` (a protocol constant of the lifecycle, not a setting).
 */
export type OrdersServiceSettings = OrdersSettings & {
  publicBaseUrl: string;
  /** extra time after payment expiry before an unpaid order expires, seconds (default: the contract's PAYMENT_GRACE_SECONDS) */
  paymentGraceSeconds?: number;
};
