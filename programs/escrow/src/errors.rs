use anchor_lang::prelude::*;

/// Append-only: clients map these codes (6000 + index), never reorder or remove.
#[error_code]
pub enum EscrowError {
    #[msg("fee_bps exceeds MAX_FEE_BPS")]
    FeeTooHigh,
    #[msg("default_review_window must be positive")]
    ReviewWindowNotPositive,
    #[msg("allowed_mints holds more than MAX_ALLOWED_MINTS entries")]
    TooManyAllowedMints,
    #[msg("signer is not the config admin")]
    NotAdmin,
    #[msg("platform authority does not match the config")]
    PlatformAuthorityMismatch,
    #[msg("signer is not the config arbiter")]
    NotArbiter,
    #[msg("buyer and seller must differ")]
    BuyerIsSeller,
    #[msg("mint is not in the config allow-list")]
    MintNotAllowed,
    #[msg("mint carries a Token-2022 extension the escrow does not accept")]
    MintExtensionNotAllowed,
    #[msg("amount must be greater than zero")]
    AmountIsZero,
    #[msg("delivery deadline must be in the future")]
    DeliveryDeadlineInPast,
    #[msg("review_window must not be negative")]
    ReviewWindowNegative,
    #[msg("signer is neither the seller nor the platform authority")]
    NotSellerOrPlatform,
    #[msg("signer is neither the buyer nor the platform authority")]
    NotBuyerOrPlatform,
    #[msg("signer is not a party to this order")]
    NotOrderParty,
    #[msg("order is not in the Funded state")]
    OrderNotFunded,
    #[msg("order is neither Funded nor Delivered")]
    OrderNotFundedOrDelivered,
    #[msg("order is not in the Delivered state")]
    OrderNotDelivered,
    #[msg("order is not in the Disputed state")]
    OrderNotDisputed,
    #[msg("review window after delivery has not elapsed yet")]
    ReviewWindowNotElapsed,
    #[msg("review window after delivery has elapsed; the order can only be claimed")]
    ReviewWindowElapsed,
    #[msg("buyer may refund alone only after a missed delivery deadline (not delivered on time; a late delivery only before auto-release)")]
    BuyerRefundNotAllowed,
    #[msg("buyer_bps exceeds 10000")]
    BuyerBpsTooHigh,
    #[msg("token account is not the buyer's account for this mint")]
    BuyerTokenAccountMismatch,
    #[msg("token account is not the seller's account for this mint")]
    SellerTokenAccountMismatch,
    #[msg("rent receiver is not the order's rent payer")]
    RentReceiverMismatch,
    #[msg("arithmetic overflow")]
    MathOverflow,
    #[msg("signer is not the program's upgrade authority")]
    NotUpgradeAuthority,
    #[msg("the co-signed fund terms have expired (now > expires_at)")]
    FundTermsExpired,
    #[msg("expires_at is further ahead than MAX_FUND_TERMS_LIFETIME")]
    FundTermsLifetimeTooLong,
    #[msg("review window exceeds config.max_review_window")]
    ReviewWindowTooLong,
    #[msg("delivery deadline is further ahead than config.max_delivery_window")]
    DeliveryDeadlineTooFar,
    #[msg("max_review_window must be at least default_review_window and at most REVIEW_WINDOW_LIMIT")]
    MaxReviewWindowOutOfRange,
    #[msg("max_delivery_window must be positive and at most DELIVERY_WINDOW_LIMIT")]
    MaxDeliveryWindowOutOfRange,
    #[msg("account has the layout of an earlier program version; the upgrade authority must migrate it")]
    AccountNotMigrated,
    #[msg("account already has the current layout")]
    AccountAlreadyCurrent,
    #[msg("account data matches no known layout of this program")]
    UnknownAccountLayout,
    #[msg("the old config has no value for a field the migration must set")]
    MigrationValueMissing,
    // ---- issue 24 (milestones, revisions, extensions, settlement by agreement) ----
    #[msg("milestone_index must be 1..=MAX_MILESTONES, and the escrow id equals the parent order id exactly for milestone 1")]
    InvalidMilestone,
    #[msg("every included revision has been requested already")]
    RevisionLimitReached,
    #[msg("the new delivery deadline must be later than the current one")]
    DeadlineNotLater,
    #[msg("proposed_by must be 1 (buyer) or 2 (seller)")]
    InvalidParty,
    #[msg("signer is neither the proposing party nor the platform authority")]
    NotProposingParty,
    #[msg("a settlement proposal must expire in the future (now < expires_at)")]
    SettlementExpiresInPast,
    #[msg("expires_at is further ahead than MAX_PROPOSAL_LIFETIME")]
    SettlementLifetimeTooLong,
    #[msg("no settlement proposal is pending on this order")]
    NoSettlementProposal,
    #[msg("the settlement proposal has expired")]
    SettlementProposalExpired,
    #[msg("buyer_bps differs from the pending settlement proposal")]
    SettlementTermsMismatch,
    #[msg("a party cannot accept its own settlement proposal")]
    OwnSettlementProposal,
}
