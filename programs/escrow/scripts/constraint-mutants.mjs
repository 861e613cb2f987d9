#!/usr/bin/env node
// Hand-written mutants of the escrow program that cargo-mutants cannot make: it never mutates
// inside attributes (every Anchor account constraint: has_one, seeds, address, token::*, constraint
// = ...) nor inside macro calls (every `require!`). Each mutant below removes or weakens one check;
// the program's tests must fail for each, except the ones marked `equivalent` (explained inline),
// which must keep passing (if one starts failing, its explanation is stale).
//
//   npm run mutants:constraints                  all mutants (about 40 s each on 2 cores)
//   npm run mutants:constraints -- rent claim    only those whose name contains every word
//   ... -- --with-proptest                       also run the random-lifecycle property test
//   ... -- --check                               only check every mutant still applies (no tests)
//   ... -- --any fund_milestone accept           those whose name contains any of the words
//   ... -- --tests=milestones,migration          only these test targets (faster; `lib` for the unit tests)
//
// Works on a copy of programs/ in a temporary directory (the checkout is never modified), with the
// usual CARGO_TARGET_DIR. Exit code 1 when a mutant survives unexpectedly. Not part of CI (slow).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const programs = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const withProptest = args.includes('--with-proptest');
const checkOnly = args.includes('--check');
const words = args.filter((a) => !a.startsWith('--'));

const RENT = '        has_one = rent_payer @ EscrowError::RentReceiverMismatch,\n';
const ATA_TREASURY =
  '        associated_token::mint = mint,\n        associated_token::authority = order.treasury,\n        associated_token::token_program = token_program,\n';
const drop = (file, text) => [file, text, ''];

/** name, edits [file under src/, exact text (must occur once), replacement], expect */
const MUTANTS = [
  // ---- the removals issue 8 found surviving
  { name: 'claim: no rent-receiver check', edits: [drop('instructions/claim.rs', RENT)] },
  {
    name: 'claim: treasury account not tied to order.treasury',
    edits: [['instructions/claim.rs', ATA_TREASURY, '        token::mint = mint,\n        token::token_program = token_program,\n']],
  },
  { name: 'claim: treasury tied to config.treasury', edits: [['instructions/claim.rs', 'authority = order.treasury', 'authority = config.treasury']] },
  { name: 'refund: no rent-receiver check', edits: [drop('instructions/refund.rs', RENT)] },
  { name: 'resolve_dispute: no rent-receiver check', edits: [drop('instructions/resolve_dispute.rs', RENT)] },
  {
    // Anchor creates `init` accounts before checking the others; the vault's creation (associated
    // token program -> the named token program) already fails with IncorrectProgramId for a mint
    // that token program does not own, so this constraint can never be the one that fires.
    name: 'fund: no mint::token_program',
    edits: [drop('instructions/fund.rs', '        mint::token_program = token_program,\n')],
    expect: 'equivalent',
  },
  // ---- the fixes of issue 8
  { name: 'release: no rent-receiver check', edits: [drop('instructions/release.rs', RENT)] },
  {
    name: 'rent receivers must be system-owned again (SystemAccount)',
    edits: ['release', 'claim', 'refund', 'resolve_dispute'].map((f) => [
      `instructions/${f}.rs`,
      "pub rent_payer: UncheckedAccount<'info>",
      "pub rent_payer: SystemAccount<'info>",
    ]),
  },
  {
    name: 'initialize_config: no upgrade-authority check',
    edits: [drop('instructions/initialize_config.rs', '        constraint = program_data.upgrade_authority_address == Some(admin.key()) @ EscrowError::NotUpgradeAuthority,\n')],
  },
  {
    name: 'initialize_config: ProgramData address not derived',
    edits: [drop('instructions/initialize_config.rs', '        seeds = [crate::ID.as_ref()],\n        bump,\n        seeds::program = bpf_loader_upgradeable::ID,\n')],
  },
  { name: 'fund: no expiry', edits: [drop('instructions/fund.rs', '    require!(now <= expires_at, EscrowError::FundTermsExpired);\n')] },
  { name: 'fund: expiry exclusive', edits: [['instructions/fund.rs', 'require!(now <= expires_at', 'require!(now < expires_at']] },
  {
    name: 'fund: expiry lifetime unbounded',
    edits: [drop('instructions/fund.rs', '    require!(expires_at.saturating_sub(now) <= MAX_FUND_TERMS_LIFETIME, EscrowError::FundTermsLifetimeTooLong);\n')],
  },
  { name: 'fund: expiry lifetime exclusive', edits: [['instructions/fund.rs', '<= MAX_FUND_TERMS_LIFETIME', '< MAX_FUND_TERMS_LIFETIME']] },
  { name: 'fund: review window unbounded', edits: [drop('instructions/fund.rs', '    require!(review_window <= config.max_review_window, EscrowError::ReviewWindowTooLong);\n')] },
  { name: 'fund: review window bound exclusive', edits: [['instructions/fund.rs', 'review_window <= config.max_review_window', 'review_window < config.max_review_window']] },
  {
    name: 'fund: delivery deadline unbounded',
    edits: [['instructions/fund.rs', 'delivery_deadline.saturating_sub(now) <= config.max_delivery_window', 'true']],
  },
  {
    name: 'fund: delivery bound exclusive',
    edits: [['instructions/fund.rs', 'delivery_deadline.saturating_sub(now) <= config.max_delivery_window', 'delivery_deadline.saturating_sub(now) < config.max_delivery_window']],
  },
  { name: 'config: max_review_window >= default unchecked', edits: [['instructions/initialize_config.rs', 'config.max_review_window >= config.default_review_window &&', '']] },
  { name: 'config: max_review_window may equal the default no more', edits: [['instructions/initialize_config.rs', 'config.max_review_window >= config.default_review_window', 'config.max_review_window > config.default_review_window']] },
  { name: 'config: max_review_window limit unchecked', edits: [['instructions/initialize_config.rs', ' && config.max_review_window <= REVIEW_WINDOW_LIMIT', '']] },
  { name: 'config: max_review_window limit exclusive', edits: [['instructions/initialize_config.rs', 'config.max_review_window <= REVIEW_WINDOW_LIMIT', 'config.max_review_window < REVIEW_WINDOW_LIMIT']] },
  { name: 'config: max_delivery_window may be 0', edits: [['instructions/initialize_config.rs', 'config.max_delivery_window > 0', 'config.max_delivery_window >= 0']] },
  { name: 'config: max_delivery_window limit unchecked', edits: [['instructions/initialize_config.rs', ' && config.max_delivery_window <= DELIVERY_WINDOW_LIMIT', '']] },
  { name: 'config: max_delivery_window limit exclusive', edits: [['instructions/initialize_config.rs', 'config.max_delivery_window <= DELIVERY_WINDOW_LIMIT', 'config.max_delivery_window < DELIVERY_WINDOW_LIMIT']] },
  // ---- signers, roles and payees
  { name: 'update_config: anyone', edits: [drop('instructions/update_config.rs', '        has_one = admin @ EscrowError::NotAdmin,\n')] },
  { name: 'fund: no platform co-signer check', edits: [drop('instructions/fund.rs', '        has_one = platform_authority @ EscrowError::PlatformAuthorityMismatch,\n')] },
  { name: 'fund: buyer may be the seller', edits: [['instructions/fund.rs', '#[account(constraint = seller.key() != buyer.key() @ EscrowError::BuyerIsSeller)]\n', '']] },
  { name: 'fund: any mint', edits: [drop('instructions/fund.rs', '        constraint = config.allowed_mints.contains(&mint.key()) @ EscrowError::MintNotAllowed,\n')] },
  { name: "fund: pays from anyone's token account", edits: [drop('instructions/fund.rs', '        token::authority = buyer,\n')] },
  {
    name: 'mark_delivered: anyone',
    edits: [['instructions/mark_delivered.rs', 'constraint = authority.key() == order.seller\n            || authority.key() == config.platform_authority @ EscrowError::NotSellerOrPlatform,', '']],
  },
  {
    name: 'release: anyone',
    edits: [['instructions/release.rs', 'constraint = authority.key() == order.buyer\n            || authority.key() == config.platform_authority @ EscrowError::NotBuyerOrPlatform,', '']],
  },
  {
    name: 'release: any seller token account',
    edits: [drop('instructions/release.rs', '        constraint = seller_token_account.owner == order.seller @ EscrowError::SellerTokenAccountMismatch,\n')],
  },
  { name: 'release: treasury tied to config.treasury', edits: [['instructions/release.rs', 'authority = order.treasury', 'authority = config.treasury']] },
  {
    name: 'open_dispute: anyone',
    edits: [
      [
        'instructions/open_dispute.rs',
        'constraint = authority.key() == order.buyer\n            || authority.key() == order.seller\n            || authority.key() == config.platform_authority @ EscrowError::NotOrderParty,',
        '',
      ],
    ],
  },
  { name: 'resolve_dispute: anyone', edits: [drop('instructions/resolve_dispute.rs', '        has_one = arbiter @ EscrowError::NotArbiter,\n')] },
  {
    name: 'resolve_dispute: any buyer token account',
    edits: [drop('instructions/resolve_dispute.rs', '        constraint = buyer_token_account.owner == order.buyer @ EscrowError::BuyerTokenAccountMismatch,\n')],
  },
  {
    name: 'refund: any buyer token account',
    edits: [drop('instructions/refund.rs', '        constraint = buyer_token_account.owner == order.buyer @ EscrowError::BuyerTokenAccountMismatch,\n')],
  },
  // ---- states and time boundaries inside require!
  { name: 'mark_delivered: from any state', edits: [['instructions/mark_delivered.rs', 'require!(order.state == OrderState::Funded', 'require!(true']] },
  { name: 'release: from any state', edits: [['instructions/release.rs', 'matches!(a.order.state, OrderState::Funded | OrderState::Delivered)', 'true']] },
  { name: 'claim: from any state', edits: [['instructions/claim.rs', 'require!(a.order.state == OrderState::Delivered', 'require!(true']] },
  { name: 'claim: one second early', edits: [['instructions/claim.rs', 'require!(now >= due', 'require!(now >= due - 1']] },
  { name: 'claim: only after the window (exclusive)', edits: [['instructions/claim.rs', 'require!(now >= due', 'require!(now > due']] },
  { name: 'resolve_dispute: from any state', edits: [['instructions/resolve_dispute.rs', 'require!(a.order.state == OrderState::Disputed', 'require!(true']] },
  { name: 'open_dispute: still at auto-release time', edits: [['instructions/open_dispute.rs', 'require!(now < due', 'require!(now <= due']] },
  { name: 'refund: buyer alone any time', edits: [drop('instructions/refund.rs', '        require!(allowed, EscrowError::BuyerRefundNotAllowed);\n')] },
  { name: 'refund: buyer alone at the deadline', edits: [['state/order.rs', 'if now <= self.delivery_deadline ||', 'if now < self.delivery_deadline ||']] },
  { name: 'refund: buyer alone once delivered on time', edits: [['state/order.rs', ' || self.delivered_on_time() {', ' {']] },
  { name: 'refund: buyer alone after a late delivery was due for claim', edits: [['state/order.rs', 'OrderState::Delivered => now < self.auto_release_at()?,', 'OrderState::Delivered => true,']] },
  { name: 'refund: buyer alone never on a dispute', edits: [['state/order.rs', 'OrderState::Funded | OrderState::Disputed => true,', 'OrderState::Funded => true,\n            OrderState::Disputed => false,']] },
  { name: 'refund: delivery at the deadline is late', edits: [['state/order.rs', 'self.delivered_at <= self.delivery_deadline', 'self.delivered_at < self.delivery_deadline']] },
  // ---- issue 20: a vault created before funding, accounts of an earlier version
  { name: 'fund: vault with plain init (front-run blocks funding)', edits: [['instructions/fund.rs', '        init_if_needed,\n', '        init,\n']] },
  ...['mark_delivered', 'open_dispute', 'release', 'claim', 'resolve_dispute', 'refund', 'update_config', 'fund'].map((ix) => ({
    name: `${ix}: config of an earlier layout accepted`,
    edits: [drop(`instructions/${ix}.rs`, '        constraint = config.is_current() @ EscrowError::AccountNotMigrated,\n')],
  })),
  ...['mark_delivered', 'open_dispute', 'release', 'claim', 'resolve_dispute', 'refund'].map((ix) => ({
    name: `${ix}: order of another version accepted`,
    edits: [drop(`instructions/${ix}.rs`, '        constraint = order.is_current() @ EscrowError::AccountNotMigrated,\n')],
  })),
  { name: 'migrate_config: anyone', edits: [['instructions/migrate.rs', '(see initialize_config).\n    #[account(\n        seeds = [crate::ID.as_ref()],\n        bump,\n        seeds::program = bpf_loader_upgradeable::ID,\n        constraint = program_data.upgrade_authority_address == Some(authority.key()) @ EscrowError::NotUpgradeAuthority,\n', '(see initialize_config).\n    #[account(\n        seeds = [crate::ID.as_ref()],\n        bump,\n        seeds::program = bpf_loader_upgradeable::ID,\n']] },
  { name: 'migrate_order: anyone', edits: [['instructions/migrate.rs', 'pub order: UncheckedAccount<\'info>,\n    #[account(\n        seeds = [crate::ID.as_ref()],\n        bump,\n        seeds::program = bpf_loader_upgradeable::ID,\n        constraint = program_data.upgrade_authority_address == Some(authority.key()) @ EscrowError::NotUpgradeAuthority,\n', 'pub order: UncheckedAccount<\'info>,\n    #[account(\n        seeds = [crate::ID.as_ref()],\n        bump,\n        seeds::program = bpf_loader_upgradeable::ID,\n']] },
  { name: 'migrate_order: an account that is not its order id\'s PDA', edits: [drop('instructions/migrate.rs', '    require_keys_eq!(pda, info.key(), anchor_lang::error::ErrorCode::ConstraintSeeds);\n')] },
  { name: 'migrate_config: windows out of range', edits: [drop('instructions/migrate.rs', '    validate(&config)?;\n')] },
  { name: 'fund: deadline may be now', edits: [['instructions/fund.rs', 'require!(delivery_deadline > now', 'require!(delivery_deadline >= now']] },
  { name: 'fund: zero amount', edits: [['instructions/fund.rs', 'require!(amount > 0', 'require!(amount >= 0']] },
  { name: 'fund: negative review window', edits: [drop('instructions/fund.rs', '    require!(review_window >= 0, EscrowError::ReviewWindowNegative);\n')] },
  { name: 'split: buyer_bps may exceed 100 %', edits: [['payout.rs', 'require!(buyer_bps <= BPS_DENOMINATOR', 'require!(buyer_bps <= BPS_DENOMINATOR + 1']] },
  { name: 'split: fee may exceed MAX_FEE_BPS', edits: [['payout.rs', 'require!(fee_bps <= MAX_FEE_BPS', 'require!(fee_bps <= MAX_FEE_BPS + 1']] },
  { name: 'config: fee may exceed MAX_FEE_BPS', edits: [['instructions/initialize_config.rs', 'require!(config.fee_bps <= MAX_FEE_BPS', 'require!(config.fee_bps <= MAX_FEE_BPS + 1']] },
  // ---- issue 24: milestones, revisions, extensions, settlement by agreement
  ...['fund_milestone', 'request_revision', 'extend_deadline', 'propose_settlement', 'accept_settlement', 'withdraw_settlement'].map((ix) => ({
    name: `${ix}: config of an earlier layout accepted`,
    edits: [drop(`instructions/${ix}.rs`, '        constraint = config.is_current() @ EscrowError::AccountNotMigrated,\n')],
  })),
  ...['request_revision', 'extend_deadline', 'propose_settlement', 'accept_settlement', 'withdraw_settlement'].map((ix) => ({
    name: `${ix}: order of another version accepted`,
    edits: [drop(`instructions/${ix}.rs`, '        constraint = order.is_current() @ EscrowError::AccountNotMigrated,\n')],
  })),
  { name: 'fund_milestone: no platform co-signature', edits: [drop('instructions/fund_milestone.rs', '        has_one = platform_authority @ EscrowError::PlatformAuthorityMismatch,\n')] },
  { name: 'fund_milestone: buyer may be the seller', edits: [['instructions/fund_milestone.rs', 'constraint = seller.key() != buyer.key() @ EscrowError::BuyerIsSeller', 'constraint = true @ EscrowError::BuyerIsSeller']] },
  { name: 'fund_milestone: any mint', edits: [drop('instructions/fund_milestone.rs', '        constraint = config.allowed_mints.contains(&mint.key()) @ EscrowError::MintNotAllowed,\n')] },
  { name: 'fund_milestone: paid from any token account', edits: [drop('instructions/fund_milestone.rs', '        token::authority = buyer,\n')] },
  { name: 'fund_milestone: vault with plain init (front-run blocks funding)', edits: [['instructions/fund_milestone.rs', '        init_if_needed,\n', '        init,\n']] },
  { name: 'fund_milestone: index 0 allowed', edits: [['instructions/fund_milestone.rs', '(1..=MAX_MILESTONES)', '(0..=MAX_MILESTONES)']] },
  { name: 'fund_milestone: index above MAX_MILESTONES', edits: [['instructions/fund_milestone.rs', '(1..=MAX_MILESTONES)', '(1..=MAX_MILESTONES + 1)']] },
  { name: 'fund_milestone: last index refused', edits: [['instructions/fund_milestone.rs', '(1..=MAX_MILESTONES)', '(1..MAX_MILESTONES)']] },
  { name: 'fund_milestone: escrow id not tied to milestone 1', edits: [drop('instructions/fund_milestone.rs', '\n            && (args.milestone_index == 1) == (args.escrow_id == args.parent_order_id)')] },
  { name: 'fund_milestone: terms unchecked', edits: [['instructions/fund_milestone.rs', 'check_terms(config, now, args.amount, args.delivery_deadline, args.review_window, args.expires_at)?', 'args.review_window']] },
  // issue 26 item 5: the fee sponsor's rent (tests/sponsorship.rs)
  { name: 'fund_milestone: rent payer recorded as the buyer', edits: [['instructions/fund_milestone.rs', 'rent_payer: ctx.accounts.rent_payer.key(),', 'rent_payer: ctx.accounts.buyer.key(),']] },
  { name: 'fund_milestone: the buyer pays the order account', edits: [['instructions/fund_milestone.rs', '        init,\n        payer = rent_payer,\n', '        init,\n        payer = buyer,\n'], ['instructions/fund_milestone.rs', '    pub buyer: Signer<\'info>,', '    #[account(mut)]\n    pub buyer: Signer<\'info>,']] },
  { name: 'fund_milestone: the buyer pays the vault', edits: [['instructions/fund_milestone.rs', '        init_if_needed,\n        payer = rent_payer,\n', '        init_if_needed,\n        payer = buyer,\n'], ['instructions/fund_milestone.rs', '    pub buyer: Signer<\'info>,', '    #[account(mut)]\n    pub buyer: Signer<\'info>,']] },
  { name: 'fund_milestone: extensions unchecked', edits: [drop('instructions/fund_milestone.rs', '    assert_mint_extensions_allowed(&ctx.accounts.mint.to_account_info())?;\n')] },
  {
    name: 'request_revision: any signer',
    edits: [['instructions/request_revision.rs', 'constraint = authority.key() == order.buyer\n            || authority.key() == config.platform_authority @ EscrowError::NotBuyerOrPlatform,', 'constraint = true @ EscrowError::NotBuyerOrPlatform,']],
  },
  { name: 'request_revision: the seller too', edits: [['instructions/request_revision.rs', 'authority.key() == order.buyer\n', 'authority.key() == order.buyer || authority.key() == order.seller\n']] },
  { name: 'request_revision: not only when delivered', edits: [drop('instructions/request_revision.rs', '    require!(order.state == OrderState::Delivered, EscrowError::OrderNotDelivered);\n')] },
  { name: 'request_revision: after auto-release', edits: [drop('instructions/request_revision.rs', '    require!(now < due, EscrowError::ReviewWindowElapsed);\n')] },
  { name: 'request_revision: at auto-release', edits: [['instructions/request_revision.rs', 'require!(now < due', 'require!(now <= due']] },
  { name: 'request_revision: no limit', edits: [drop('instructions/request_revision.rs', '    require!(order.revisions_used < order.revisions_included, EscrowError::RevisionLimitReached);\n')] },
  { name: 'request_revision: one more than included', edits: [['instructions/request_revision.rs', 'order.revisions_used < order.revisions_included', 'order.revisions_used <= order.revisions_included']] },
  { name: 'request_revision: timer keeps running', edits: [drop('instructions/request_revision.rs', '    order.delivered_at = 0;\n')] },
  { name: 'request_revision: deadline unchanged', edits: [['instructions/request_revision.rs', 'order.delivery_deadline = revised_deadline(', 'let _ = revised_deadline(']] },
  { name: 'request_revision: minimum revision time ignored', edits: [['instructions/request_revision.rs', '.max(0).max(MIN_REVISION_SECONDS)', '.max(0)']] },
  { name: 'request_revision: uncapped', edits: [['instructions/request_revision.rs', '.min(now.checked_add(max_delivery_window)?)', '']] },
  {
    name: 'extend_deadline: any signer',
    edits: [['instructions/extend_deadline.rs', 'constraint = authority.key() == order.buyer\n            || authority.key() == config.platform_authority @ EscrowError::NotBuyerOrPlatform,', 'constraint = true @ EscrowError::NotBuyerOrPlatform,']],
  },
  { name: 'extend_deadline: the seller too', edits: [['instructions/extend_deadline.rs', 'authority.key() == order.buyer\n', 'authority.key() == order.buyer || authority.key() == order.seller\n']] },
  { name: 'extend_deadline: any state', edits: [drop('instructions/extend_deadline.rs', '    require!(order.state == OrderState::Funded, EscrowError::OrderNotFunded);\n')] },
  { name: 'extend_deadline: an earlier deadline', edits: [drop('instructions/extend_deadline.rs', '    require!(new_deadline > order.delivery_deadline, EscrowError::DeadlineNotLater);\n')] },
  { name: 'extend_deadline: the same deadline', edits: [['instructions/extend_deadline.rs', 'new_deadline > order.delivery_deadline', 'new_deadline >= order.delivery_deadline']] },
  { name: 'extend_deadline: a deadline in the past', edits: [drop('instructions/extend_deadline.rs', '    require!(new_deadline > now, EscrowError::DeliveryDeadlineInPast);\n')] },
  { name: 'extend_deadline: a deadline of now', edits: [['instructions/extend_deadline.rs', 'require!(new_deadline > now', 'require!(new_deadline >= now']] },
  { name: 'extend_deadline: unbounded', edits: [drop('instructions/extend_deadline.rs', '    require!(new_deadline.saturating_sub(now) <= max_delivery_window, EscrowError::DeliveryDeadlineTooFar);\n')] },
  { name: 'extend_deadline: bound exclusive', edits: [['instructions/extend_deadline.rs', '<= max_delivery_window', '< max_delivery_window']] },
  { name: 'propose_settlement: any party code', edits: [drop('instructions/propose_settlement.rs', '        constraint = proposed_by == PARTY_BUYER || proposed_by == PARTY_SELLER @ EscrowError::InvalidParty,\n')] },
  {
    name: 'propose_settlement: any signer',
    edits: [['instructions/propose_settlement.rs', 'constraint = order.party_key(proposed_by) == Some(authority.key())\n            || authority.key() == config.platform_authority @ EscrowError::NotProposingParty,', 'constraint = true @ EscrowError::NotProposingParty,']],
  },
  { name: 'propose_settlement: a party for the other', edits: [['instructions/propose_settlement.rs', 'order.party_key(proposed_by) == Some(authority.key())', '(authority.key() == order.buyer || authority.key() == order.seller)']] },
  { name: 'propose_settlement: bps unbounded', edits: [drop('instructions/propose_settlement.rs', '    require!(buyer_bps <= BPS_DENOMINATOR, EscrowError::BuyerBpsTooHigh);\n')] },
  { name: 'propose_settlement: expiring now', edits: [['instructions/propose_settlement.rs', 'require!(expires_at > now', 'require!(expires_at >= now']] },
  { name: 'propose_settlement: expired', edits: [drop('instructions/propose_settlement.rs', '    require!(expires_at > now, EscrowError::SettlementExpiresInPast);\n')] },
  { name: 'propose_settlement: lifetime unbounded', edits: [drop('instructions/propose_settlement.rs', '    require!(expires_at.saturating_sub(now) <= MAX_PROPOSAL_LIFETIME, EscrowError::SettlementLifetimeTooLong);\n')] },
  { name: 'propose_settlement: lifetime exclusive', edits: [['instructions/propose_settlement.rs', '<= MAX_PROPOSAL_LIFETIME', '< MAX_PROPOSAL_LIFETIME']] },
  { name: 'accept_settlement: without a proposal', edits: [drop('instructions/accept_settlement.rs', '        constraint = order.proposer_key().is_some() @ EscrowError::NoSettlementProposal,\n')] },
  {
    name: 'accept_settlement: any signer',
    edits: [['instructions/accept_settlement.rs', 'constraint = authority.key() == order.buyer\n            || authority.key() == order.seller\n            || authority.key() == config.platform_authority @ EscrowError::NotOrderParty,', 'constraint = true @ EscrowError::NotOrderParty,']],
  },
  { name: 'accept_settlement: the proposer accepts', edits: [drop('instructions/accept_settlement.rs', '        constraint = order.proposer_key() != Some(authority.key()) @ EscrowError::OwnSettlementProposal,\n')] },
  { name: 'accept_settlement: any share', edits: [drop('instructions/accept_settlement.rs', '    require!(buyer_bps == proposal.buyer_bps, EscrowError::SettlementTermsMismatch);\n')] },
  { name: 'accept_settlement: expired', edits: [drop('instructions/accept_settlement.rs', '    require!(now < proposal.expires_at, EscrowError::SettlementProposalExpired);\n')] },
  { name: 'accept_settlement: at expiry', edits: [['instructions/accept_settlement.rs', 'require!(now < proposal.expires_at', 'require!(now <= proposal.expires_at']] },
  { name: 'accept_settlement: no rent-receiver check', edits: [drop('instructions/accept_settlement.rs', RENT)] },
  { name: 'accept_settlement: any mint', edits: [drop('instructions/accept_settlement.rs', '        has_one = mint,\n')] },
  { name: 'accept_settlement: seller account unchecked', edits: [drop('instructions/accept_settlement.rs', '        constraint = seller_token_account.owner == order.seller @ EscrowError::SellerTokenAccountMismatch,\n')] },
  { name: 'accept_settlement: buyer account unchecked', edits: [drop('instructions/accept_settlement.rs', '        constraint = buyer_token_account.owner == order.buyer @ EscrowError::BuyerTokenAccountMismatch,\n')] },
  {
    name: 'accept_settlement: treasury account not tied to order.treasury',
    edits: [['instructions/accept_settlement.rs', ATA_TREASURY, '        token::mint = mint,\n        token::token_program = token_program,\n']],
  },
  { name: 'accept_settlement: no fee', edits: [['instructions/accept_settlement.rs', 'split(a.order.amount, buyer_bps, a.order.fee_bps)', 'split(a.order.amount, buyer_bps, 0)']] },
  { name: 'accept_settlement: pays the stored share, not the signed one', edits: [['instructions/accept_settlement.rs', 'split(a.order.amount, buyer_bps, a.order.fee_bps)', 'split(a.order.amount, proposal.buyer_bps.saturating_sub(1), a.order.fee_bps)']] },
  { name: 'withdraw_settlement: without a proposal', edits: [drop('instructions/withdraw_settlement.rs', '        constraint = order.proposer_key().is_some() @ EscrowError::NoSettlementProposal,\n')] },
  {
    name: 'withdraw_settlement: any signer',
    edits: [['instructions/withdraw_settlement.rs', 'constraint = order.proposer_key() == Some(authority.key())\n            || authority.key() == config.platform_authority @ EscrowError::NotProposingParty,', 'constraint = true @ EscrowError::NotProposingParty,']],
  },
  { name: 'withdraw_settlement: the other party too', edits: [['instructions/withdraw_settlement.rs', 'order.proposer_key() == Some(authority.key())\n', '(authority.key() == order.buyer || authority.key() == order.seller)\n']] },
  { name: 'withdraw_settlement: proposal kept', edits: [drop('instructions/withdraw_settlement.rs', '    order.settlement = SettlementProposal::default();\n')] },
  { name: 'migrate_order: any version byte at 237 bytes', edits: [drop('instructions/migrate.rs', '                require!(old.version == 1, EscrowError::UnknownAccountLayout);\n')] },
];

const anyWord = args.includes('--any');
const selected = MUTANTS.filter((m) => words[anyWord ? 'some' : 'every']((w) => m.name.toLowerCase().includes(w.toLowerCase())));
if (!selected.length) {
  console.error(`no mutant matches ${words.join(' ')}`);
  process.exit(2);
}

if (checkOnly) {
  let stale = 0;
  for (const m of selected) {
    for (const [file, from] of m.edits) {
      if (readFileSync(join(programs, 'escrow', 'src', file), 'utf8').split(from).length !== 2) {
        console.log(`stale: ${m.name} (${file})`);
        stale++;
      }
    }
  }
  console.log(`${selected.length} mutants, ${stale} stale`);
  process.exit(stale ? 1 : 0);
}

const copy = mkdtempSync(join(tmpdir(), 'bazaar-constraint-mutants-'));
cpSync(programs, copy, { recursive: true, filter: (src) => !/\/(target|node_modules)(\/|$)/.test(src) });
const src = (f) => join(copy, 'escrow', 'src', f);
// A target directory of its own: the copy builds the same crates under the same names, and after the
// run the last mutant's artifacts stay behind. In the checkout's own target directory a later
// `cargo test` whose sources are older than that build took them as fresh, and ran mutated code.
const env = {
  ...process.env,
  CARGO_TARGET_DIR: join(process.env.CARGO_TARGET_DIR || join(homedir(), '.cache', 'bazaar', 'cargo-target'), 'constraint-mutants'),
};
const only = args.find((a) => a.startsWith('--tests='))?.slice('--tests='.length).split(',');
const tests = only
  ? only.flatMap((t) => (t === 'lib' ? ['--lib'] : ['--test', t]))
  : ['--test', 'escrow_flows', '--test', 'migration', '--test', 'milestones', '--test', 'payout_props', '--lib', ...(withProptest ? ['--test', 'conservation'] : [])];
const cargoTest = () =>
  spawnSync('cargo', ['test', '-p', 'bazaar-escrow', '--manifest-path', join(copy, 'Cargo.toml'), ...tests], { env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });

let unexpected = 0;
try {
  const baseline = cargoTest();
  if (baseline.status !== 0) {
    console.error(`${baseline.stdout}\n${baseline.stderr}\nbaseline: the unmutated tests fail; fix them first`);
    process.exit(2);
  }
  for (const m of selected) {
    const originals = new Map();
    for (const [file, from] of m.edits) {
      const text = originals.get(file) ?? readFileSync(src(file), 'utf8');
      originals.set(file, text);
      if (text.split(from).length !== 2) throw new Error(`${m.name}: the text to mutate does not occur exactly once in ${file}`);
    }
    for (const [file, from, to] of m.edits) writeFileSync(src(file), readFileSync(src(file), 'utf8').replace(from, to));
    const started = Date.now();
    const r = cargoTest();
    for (const [file, text] of originals) writeFileSync(src(file), text);
    const out = `${r.stdout}\n${r.stderr}`;
    const compiled = !/error(\[E\d+\])?: /.test(out) || /test result:/.test(out);
    const failing = [...out.matchAll(/^test (\S+) \.\.\. FAILED$/gm)].map((x) => x[1]);
    const killed = r.status !== 0;
    const expected = (m.expect ?? 'killed') === 'killed' ? killed : !killed;
    if (!expected) unexpected++;
    const verdict = killed ? (compiled ? 'killed' : 'unviable (does not compile)') : 'survived';
    console.log(
      `${expected ? 'ok  ' : 'BAD '} ${verdict.padEnd(10)} ${m.name}${m.expect ? ` [expected ${m.expect}]` : ''} (${Math.round((Date.now() - started) / 1000)} s)${failing.length ? `: ${failing.join(', ')}` : ''}`,
    );
  }
} finally {
  rmSync(copy, { recursive: true, force: true });
}
console.log(`${selected.length} mutants, ${unexpected} unexpected`);
process.exit(unexpected ? 1 : 0);
