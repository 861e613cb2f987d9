//! Stories of one order each: Alice buys from Bob, Pat (the platform key) co-signs and may act
//! for either, Carol arbitrates, Trent's wallet collects the fee, Mallory tries her luck.

#![allow(deprecated)]

mod common;

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::AccountSerialize;
use anchor_spl::associated_token::spl_associated_token_account;
use common::*;
use escrow::errors::EscrowError;
use escrow::state::OrderState;
use escrow::UpdateConfigArgs;
use anchor_lang::prelude::Pubkey;
use solana_sdk::{bpf_loader_upgradeable, instruction::InstructionError, signature::Keypair, signer::Signer, system_instruction};

const PRICE: u64 = 40_000_000; // 40 USDC
const FEE: u64 = PRICE * FEE_BPS as u64 / 10_000; // 1 USDC

// ---------------------------------------------------------------- config

#[tokio::test]
async fn the_admin_initialises_the_config_once_with_the_quoted_terms() {
    let mut env = Env::new().await;
    let config = env.config().await;
    assert_eq!(config.admin, env.admin.pubkey());
    assert_eq!(config.platform_authority, env.platform.pubkey());
    assert_eq!(config.arbiter, env.carol.pubkey());
    assert_eq!(config.treasury, env.trent.pubkey());
    assert_eq!(config.fee_bps, FEE_BPS);
    assert_eq!(config.default_review_window, REVIEW_WINDOW);
    assert_eq!(config.allowed_mints.len(), 4);
    let canonical = anchor_lang::prelude::Pubkey::find_program_address(&[escrow::CONFIG_SEED], &escrow::ID).1;
    assert_eq!(config.bump, canonical);

    // Mallory cannot re-initialise it to make herself admin.
    let mallory = kp(&env.mallory);
    let mut args = env.default_config_args();
    args.arbiter = mallory.pubkey();
    let ix = env.ix_initialize_config(&mallory.pubkey(), args);
    assert_ix_err(env.send(vec![ix], &[&mallory]).await, SYSTEM_ACCOUNT_ALREADY_IN_USE);
    assert_eq!(env.config().await.admin, env.admin.pubkey());
}

#[tokio::test]
async fn initialising_with_out_of_range_terms_is_refused() {
    let mut env = Env::without_config().await;
    let admin = kp(&env.admin);
    let mut args = env.default_config_args();
    args.fee_bps = escrow::MAX_FEE_BPS + 1;
    let ix = env.ix_initialize_config(&admin.pubkey(), args);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::FeeTooHigh);

    let mut args = env.default_config_args();
    args.default_review_window = 0;
    let ix = env.ix_initialize_config(&admin.pubkey(), args);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::ReviewWindowNotPositive);

    let mut args = env.default_config_args();
    args.allowed_mints = (0..9).map(|_| Keypair::new().pubkey()).collect();
    let ix = env.ix_initialize_config(&admin.pubkey(), args);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::TooManyAllowedMints);

    // At the maximum fee and allow-list length it is accepted.
    let mut args = env.default_config_args();
    args.fee_bps = escrow::MAX_FEE_BPS;
    args.allowed_mints = (0..escrow::MAX_ALLOWED_MINTS).map(|_| Keypair::new().pubkey()).collect();
    let ix = env.ix_initialize_config(&admin.pubkey(), args);
    env.send(vec![ix], &[&admin]).await.unwrap();
    assert_eq!(env.config().await.fee_bps, escrow::MAX_FEE_BPS);
}

#[tokio::test]
async fn only_the_admin_updates_the_config_and_can_hand_it_over() {
    let mut env = Env::new().await;
    let (admin, mallory) = (kp(&env.admin), kp(&env.mallory));

    let grab = UpdateConfigArgs { arbiter: Some(mallory.pubkey()), ..Default::default() };
    let ix = env.ix_update_config(&mallory.pubkey(), grab);
    assert_escrow_err(env.send(vec![ix], &[&mallory]).await, EscrowError::NotAdmin);

    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { fee_bps: Some(1_001), ..Default::default() });
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::FeeTooHigh);
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { default_review_window: Some(0), ..Default::default() });
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::ReviewWindowNotPositive);
    let too_many = (0..9).map(|_| Keypair::new().pubkey()).collect();
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { allowed_mints: Some(too_many), ..Default::default() });
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::TooManyAllowedMints);

    // Partial update keeps the other fields.
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { fee_bps: Some(100), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    let config = env.config().await;
    assert_eq!((config.fee_bps, config.arbiter, config.allowed_mints.len()), (100, env.carol.pubkey(), 4));

    // Rotation: the new admin rules, the old one no longer does.
    let new_admin = Keypair::new();
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { admin: Some(new_admin.pubkey()), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { fee_bps: Some(0), ..Default::default() });
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::NotAdmin);
    let ix = env.ix_update_config(&new_admin.pubkey(), UpdateConfigArgs { fee_bps: Some(0), ..Default::default() });
    env.send(vec![ix], &[&new_admin]).await.unwrap();
    assert_eq!(env.config().await.fee_bps, 0);
}

#[tokio::test]
async fn only_the_upgrade_authority_initialises_a_fresh_deployment() {
    let mut env = Env::without_config().await;
    let (admin, mallory) = (kp(&env.admin), kp(&env.mallory));
    let mut grab = env.default_config_args();
    grab.platform_authority = mallory.pubkey();
    grab.arbiter = mallory.pubkey();
    grab.treasury = mallory.pubkey();

    // Mallory sends initialize_config first on a fresh deployment: she is not the upgrade authority.
    let ix = env.ix_initialize_config(&mallory.pubkey(), grab.clone());
    assert_escrow_err(env.send(vec![ix], &[&mallory]).await, EscrowError::NotUpgradeAuthority);

    // She points the ProgramData slot at the ProgramData of a program she deployed herself.
    let hers = Pubkey::find_program_address(&[Keypair::new().pubkey().as_ref()], &bpf_loader_upgradeable::ID).0;
    env.ctx.set_account(&hers, &program_data_account(Some(mallory.pubkey())).into());
    let mut ix = env.ix_initialize_config(&mallory.pubkey(), grab.clone());
    ix.accounts[2].pubkey = hers;
    assert_anchor_err(env.send(vec![ix], &[&mallory]).await, Anchor::ConstraintSeeds);

    // Or at look-alike bytes in an account that the upgradeable loader does not own.
    let fake = Keypair::new().pubkey();
    let mut look_alike = program_data_account(Some(mallory.pubkey()));
    look_alike.owner = solana_sdk::system_program::ID;
    env.ctx.set_account(&fake, &look_alike.into());
    let mut ix = env.ix_initialize_config(&mallory.pubkey(), grab);
    ix.accounts[2].pubkey = fake;
    assert_anchor_err(env.send(vec![ix], &[&mallory]).await, Anchor::AccountOwnedByWrongProgram);
    assert!(!env.exists(env.config).await);

    // The upgrade authority does it, and becomes the admin.
    let args = env.default_config_args();
    let ix = env.ix_initialize_config(&admin.pubkey(), args);
    env.send(vec![ix], &[&admin]).await.unwrap();
    assert_eq!(env.config().await.admin, admin.pubkey());
}

#[tokio::test]
async fn an_immutable_or_unknown_deployment_cannot_be_configured() {
    // Upgrade authority revoked before the config was created: nobody can create it.
    let mut env = Env::deployed(Keypair::new(), |_| Deployment::Immutable).await;
    let admin = kp(&env.admin);
    let ix = env.ix_initialize_config(&admin.pubkey(), env.default_config_args());
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::NotUpgradeAuthority);

    // No ProgramData account at the derived address.
    let mut env = Env::deployed(Keypair::new(), |_| Deployment::NoProgramData).await;
    let admin = kp(&env.admin);
    let ix = env.ix_initialize_config(&admin.pubkey(), env.default_config_args());
    assert_anchor_err(env.send(vec![ix], &[&admin]).await, Anchor::AccountNotInitialized);
    assert!(!env.exists(env.config).await);
}

#[tokio::test]
async fn config_windows_stay_within_their_limits() {
    // The limits as documented (README; the IDL's constants), not read from the crate, so that a
    // changed constant fails here.
    const REVIEW_WINDOW_LIMIT: i64 = 365 * DAY;
    const DELIVERY_WINDOW_LIMIT: i64 = 3 * 365 * DAY;
    let mut env = Env::without_config().await;
    let admin = kp(&env.admin);
    let refused = [
        (REVIEW_WINDOW - 1, MAX_DELIVERY_WINDOW, EscrowError::MaxReviewWindowOutOfRange), // below the default
        (REVIEW_WINDOW_LIMIT + 1, MAX_DELIVERY_WINDOW, EscrowError::MaxReviewWindowOutOfRange),
        (i64::MAX, MAX_DELIVERY_WINDOW, EscrowError::MaxReviewWindowOutOfRange),
        (MAX_REVIEW_WINDOW, 0, EscrowError::MaxDeliveryWindowOutOfRange),
        (MAX_REVIEW_WINDOW, -1, EscrowError::MaxDeliveryWindowOutOfRange),
        (MAX_REVIEW_WINDOW, DELIVERY_WINDOW_LIMIT + 1, EscrowError::MaxDeliveryWindowOutOfRange),
        (MAX_REVIEW_WINDOW, i64::MAX, EscrowError::MaxDeliveryWindowOutOfRange),
    ];
    for (max_review, max_delivery, error) in refused {
        let mut args = env.default_config_args();
        args.max_review_window = max_review;
        args.max_delivery_window = max_delivery;
        let ix = env.ix_initialize_config(&admin.pubkey(), args);
        assert_escrow_err(env.send(vec![ix], &[&admin]).await, error);
    }
    // The edges are accepted: max review window = default, delivery window of one second.
    let mut args = env.default_config_args();
    args.max_review_window = REVIEW_WINDOW;
    args.max_delivery_window = 1;
    let ix = env.ix_initialize_config(&admin.pubkey(), args);
    env.send(vec![ix], &[&admin]).await.unwrap();
    let config = env.config().await;
    assert_eq!((config.max_review_window, config.max_delivery_window), (REVIEW_WINDOW, 1));

    // update_config keeps the same invariants, and accepts the upper limits.
    let update = |max_review_window, max_delivery_window, default_review_window| UpdateConfigArgs {
        max_review_window,
        max_delivery_window,
        default_review_window,
        ..Default::default()
    };
    for (args, error) in [
        (update(Some(REVIEW_WINDOW - 1), None, None), EscrowError::MaxReviewWindowOutOfRange),
        (update(None, None, Some(REVIEW_WINDOW + 1)), EscrowError::MaxReviewWindowOutOfRange),
        (update(Some(REVIEW_WINDOW_LIMIT + 1), None, None), EscrowError::MaxReviewWindowOutOfRange),
        (update(None, Some(0), None), EscrowError::MaxDeliveryWindowOutOfRange),
        (update(None, Some(DELIVERY_WINDOW_LIMIT + 1), None), EscrowError::MaxDeliveryWindowOutOfRange),
    ] {
        let ix = env.ix_update_config(&admin.pubkey(), args);
        assert_escrow_err(env.send(vec![ix], &[&admin]).await, error);
    }
    let ix = env.ix_update_config(&admin.pubkey(), update(Some(REVIEW_WINDOW_LIMIT), Some(DELIVERY_WINDOW_LIMIT), None));
    env.send(vec![ix], &[&admin]).await.unwrap();
    let config = env.config().await;
    assert_eq!((config.max_review_window, config.max_delivery_window), (REVIEW_WINDOW_LIMIT, DELIVERY_WINDOW_LIMIT));
    assert_eq!((config.default_review_window, config.fee_bps), (REVIEW_WINDOW, FEE_BPS));
}

// ---------------------------------------------------------------- fund

#[tokio::test]
async fn alice_funds_an_order_and_the_vault_holds_exactly_the_price() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let lamports_before = env.lamports(env.alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;

    assert_eq!(env.balance(env.alice.pubkey(), usdc).await, ALICE_START - PRICE);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    let order = env.order(&o).await.unwrap();
    assert_eq!(order.order_id, o.id);
    assert_eq!((order.buyer, order.seller, order.mint), (env.alice.pubkey(), env.bob.pubkey(), usdc.mint));
    assert_eq!(order.amount, PRICE);
    assert_eq!(order.state, OrderState::Funded);
    assert_eq!((order.fee_bps, order.treasury), (FEE_BPS, env.trent.pubkey()));
    assert_eq!(order.funded_at, START_TIME);
    assert_eq!(order.delivery_deadline, START_TIME + 7 * DAY);
    assert_eq!((order.delivered_at, order.disputed_at), (0, 0));
    assert_eq!(order.review_window, REVIEW_WINDOW, "0 means the config default");
    assert_eq!(order.rent_payer, env.alice.pubkey());
    let canonical = anchor_lang::prelude::Pubkey::find_program_address(&[escrow::ORDER_SEED, &o.id], &escrow::ID).1;
    assert_eq!(order.bump, canonical);
    // Alice paid the rent of the order and the vault; the program-test payer paid the fees.
    assert!(env.lamports(env.alice.pubkey()).await < lamports_before);
}

#[tokio::test]
async fn a_custom_review_window_is_kept_and_token_2022_mints_work() {
    let mut env = Env::new().await;
    let t22 = env.t22;
    let o = env.order_ref(t22, PRICE);
    let deadline = env.now().await + DAY;
    env.fund(&o, deadline, 3600).await.unwrap();
    assert_eq!(env.order(&o).await.unwrap().review_window, 3600);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
}

#[tokio::test]
async fn funding_refuses_bad_terms() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let deadline = env.now().await + DAY;

    let zero = env.order_ref(usdc, 0);
    assert_escrow_err(env.fund(&zero, deadline, 0).await, EscrowError::AmountIsZero);

    let o = env.order_ref(usdc, PRICE);
    let now = env.now().await;
    assert_escrow_err(env.fund(&o, now, 0).await, EscrowError::DeliveryDeadlineInPast);
    assert_escrow_err(env.fund(&o, deadline, -1).await, EscrowError::ReviewWindowNegative);

    // More than Alice holds: the token program refuses, nothing is created.
    let greedy = env.order_ref(usdc, ALICE_START + 1);
    assert_ix_err(env.fund(&greedy, deadline, 0).await, TOKEN_INSUFFICIENT_FUNDS);
    assert!(!env.exists(greedy.pda).await);
}

#[tokio::test]
async fn co_signed_fund_terms_expire_on_chain() {
    const MAX_FUND_TERMS_LIFETIME: i64 = DAY; // as documented, not read from the crate
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, pat) = (kp(&env.alice), kp(&env.bob), kp(&env.platform));
    let now = env.now().await;
    let deadline = now + DAY;

    // Terms may live at most MAX_FUND_TERMS_LIFETIME.
    let o = env.order_ref(usdc, PRICE);
    assert_escrow_err(
        env.fund_until(&o, deadline, 0, now + MAX_FUND_TERMS_LIFETIME + 1).await,
        EscrowError::FundTermsLifetimeTooLong,
    );
    assert_escrow_err(env.fund_until(&o, deadline, 0, i64::MAX).await, EscrowError::FundTermsLifetimeTooLong);
    env.fund_until(&o, deadline, 0, now + MAX_FUND_TERMS_LIFETIME).await.unwrap();

    // Valid up to and including `expires_at`, refused one second later.
    let o = env.order_ref(usdc, PRICE);
    let expires_at = now + PAYMENT_WINDOW;
    env.warp_to(expires_at + 1).await;
    assert_escrow_err(env.fund_until(&o, deadline, 0, expires_at).await, EscrowError::FundTermsExpired);
    env.warp_to(expires_at).await;
    env.fund_until(&o, deadline, 0, expires_at).await.unwrap();

    // The replay of issue 8: the order is funded and refunded (closed); a second fund transaction
    // the service co-signed for the same order id earlier is submitted once its terms expired.
    let replay = env.ix_fund(&o, deadline, 0, expires_at);
    env.refund(&o, &bob).await.unwrap();
    assert!(!env.exists(o.pda).await);
    let alice_before = env.balance(alice.pubkey(), usdc).await;
    env.warp_to(expires_at + 1).await;
    assert_escrow_err(env.send(vec![replay], &[&alice, &pat]).await, EscrowError::FundTermsExpired);
    assert!(!env.exists(o.pda).await && !env.exists(o.vault).await);
    assert_eq!(env.balance(alice.pubkey(), usdc).await, alice_before);
}

#[tokio::test]
async fn review_window_and_delivery_deadline_are_bounded_by_the_config() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let admin = kp(&env.admin);
    let now = env.now().await;
    let deadline = now + DAY;

    let o = env.order_ref(usdc, PRICE);
    assert_escrow_err(env.fund(&o, deadline, MAX_REVIEW_WINDOW + 1).await, EscrowError::ReviewWindowTooLong);
    assert_escrow_err(env.fund(&o, deadline, i64::MAX).await, EscrowError::ReviewWindowTooLong);
    assert_escrow_err(env.fund(&o, now + MAX_DELIVERY_WINDOW + 1, 0).await, EscrowError::DeliveryDeadlineTooFar);
    assert_escrow_err(env.fund(&o, i64::MAX, 0).await, EscrowError::DeliveryDeadlineTooFar);
    assert!(!env.exists(o.pda).await);

    // Both limits are inclusive.
    env.fund(&o, now + MAX_DELIVERY_WINDOW, MAX_REVIEW_WINDOW).await.unwrap();
    let order = env.order(&o).await.unwrap();
    assert_eq!((order.delivery_deadline, order.review_window), (now + MAX_DELIVERY_WINDOW, MAX_REVIEW_WINDOW));

    // The bounds are read live: after the admin lowers them, the old maxima are refused.
    let lower = UpdateConfigArgs {
        max_review_window: Some(REVIEW_WINDOW),
        max_delivery_window: Some(DAY),
        ..Default::default()
    };
    let ix = env.ix_update_config(&admin.pubkey(), lower);
    env.send(vec![ix], &[&admin]).await.unwrap();
    let o = env.order_ref(usdc, PRICE);
    assert_escrow_err(env.fund(&o, deadline, REVIEW_WINDOW + 1).await, EscrowError::ReviewWindowTooLong);
    assert_escrow_err(env.fund(&o, deadline + 1, 0).await, EscrowError::DeliveryDeadlineTooFar);
    env.fund(&o, deadline, REVIEW_WINDOW).await.unwrap();
}

#[tokio::test]
async fn alice_cannot_sell_to_herself() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let mut o = env.order_ref(usdc, PRICE);
    o.seller = env.alice.pubkey();
    let deadline = env.now().await + DAY;
    assert_escrow_err(env.fund(&o, deadline, 0).await, EscrowError::BuyerIsSeller);
}

#[tokio::test]
async fn funding_needs_the_platform_s_co_signature() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let o = env.order_ref(usdc, PRICE);
    let deadline = env.now().await + DAY;
    let (alice, mallory) = (kp(&env.alice), kp(&env.mallory));

    // Mallory co-signs as "platform".
    let mut accounts = env.fund_accounts(&o);
    accounts.platform_authority = mallory.pubkey();
    let expires_at = env.now().await + PAYMENT_WINDOW;
    let ix = env.ix_fund_with(&o, accounts, deadline, 0, expires_at);
    assert_escrow_err(env.send(vec![ix], &[&alice, &mallory]).await, EscrowError::PlatformAuthorityMismatch);

    // Pat's key is named but Pat did not sign.
    let mut ix = env.ix_fund(&o, deadline, 0, expires_at);
    ix.accounts[1].is_signer = false;
    assert_anchor_err(env.send(vec![ix], &[&alice]).await, Anchor::AccountNotSigner);
    assert!(!env.exists(o.pda).await);
}

#[tokio::test]
async fn only_allow_listed_mints_without_dangerous_extensions_are_accepted() {
    let mut env = Env::new().await;
    let deadline = env.now().await + DAY;

    let stray = env.stray;
    let o = env.order_ref(stray, PRICE);
    assert_escrow_err(env.fund(&o, deadline, 0).await, EscrowError::MintNotAllowed);

    // Both are allow-listed by mistake; the extension guard still refuses them.
    let delegate = env.t22_delegate;
    let o = env.order_ref(delegate, PRICE);
    assert_escrow_err(env.fund(&o, deadline, 0).await, EscrowError::MintExtensionNotAllowed);
    let fee = env.t22_fee;
    let o = env.order_ref(fee, PRICE);
    assert_escrow_err(env.fund(&o, deadline, 0).await, EscrowError::MintExtensionNotAllowed);
    assert_eq!(env.balance(env.alice.pubkey(), fee).await, ALICE_START);
}

#[tokio::test]
async fn every_token_2022_extension_that_can_touch_a_vault_is_refused() {
    use anchor_spl::token_2022::spl_token_2022::extension::ExtensionType;
    let mut env = Env::new().await;
    let admin = kp(&env.admin);
    let dangerous = [
        ExtensionType::NonTransferable,
        ExtensionType::TransferHook,
        ExtensionType::DefaultAccountState,
        ExtensionType::Pausable,
        ExtensionType::ConfidentialTransferMint,
    ];
    let mut mints = vec![];
    for ext in dangerous {
        let m = env.create_mint(anchor_spl::token_2022::ID, &[ext]).await;
        env.create_ata(env.alice.pubkey(), m).await;
        mints.push(m);
    }
    // Even with every one of them allow-listed by mistake, funding is refused.
    let mut allowed: Vec<_> = mints.iter().map(|m| m.mint).collect();
    allowed.push(env.t22.mint);
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { allowed_mints: Some(allowed), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    let deadline = env.now().await + DAY;
    for (m, ext) in mints.into_iter().zip(dangerous) {
        let o = env.order_ref(m, 1);
        let result = env.fund(&o, deadline, 0).await;
        assert_eq!(
            custom_code(result),
            Some(escrow_code(EscrowError::MintExtensionNotAllowed)),
            "{ext:?} must be refused"
        );
        assert!(!env.exists(o.pda).await);
    }
    // The harmless one (mint close authority) still works.
    let t22 = env.t22;
    env.funded_order(t22, PRICE).await;
}

#[tokio::test]
async fn funding_pins_the_token_program_and_the_buyer_s_token_account() {
    let mut env = Env::new().await;
    let (usdc, t22) = (env.usdc, env.t22);
    let deadline = env.now().await + DAY;
    let expires_at = env.now().await + PAYMENT_WINDOW;
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));

    // A mint named under the other token program, with Alice's real token account. Anchor creates
    // `init` accounts before it checks the others, so the vault's creation is what refuses it: the
    // associated token program's CPI into the named token program rejects a mint it does not own.
    // (This is also why `mint::token_program` on `fund` can never be the error that fires.)
    for (m, wrong) in [(usdc, anchor_spl::token_2022::ID), (t22, anchor_spl::token::ID)] {
        let mut lying = env.order_ref(m, PRICE);
        lying.mint.token_program = wrong;
        lying.vault = env.ata(lying.pda, lying.mint);
        let mut accounts = env.fund_accounts(&lying);
        accounts.buyer_token_account = env.ata(env.alice.pubkey(), m);
        let ix = env.ix_fund_with(&lying, accounts, deadline, 0, expires_at);
        assert_ix_err(env.send(vec![ix], &[&alice, &pat]).await, InstructionError::IncorrectProgramId);
        assert!(!env.exists(lying.pda).await);
        assert_eq!(env.balance(env.alice.pubkey(), m).await, ALICE_START);
    }

    // Paying from Mallory's account (Alice is not its authority).
    let mallory_usdc = env.ata(env.mallory.pubkey(), usdc);
    let o = env.order_ref(usdc, PRICE);
    let mut accounts = env.fund_accounts(&o);
    accounts.buyer_token_account = mallory_usdc;
    let ix = env.ix_fund_with(&o, accounts, deadline, 0, expires_at);
    assert_anchor_err(env.send(vec![ix], &[&alice, &pat]).await, Anchor::ConstraintTokenOwner);

    // A vault that is not the order PDA's associated token account (a fresh address): the vault's
    // creation derives the real address, which the transaction does not carry. On chain the CPI
    // fails with MissingAccount; natively program-test's CPI stub panics on it, which surfaces as
    // ProgramFailedToComplete.
    let mut accounts = env.fund_accounts(&o);
    accounts.vault = Keypair::new().pubkey();
    let ix = env.ix_fund_with(&o, accounts, deadline, 0, expires_at);
    assert_ix_err(env.send(vec![ix], &[&alice, &pat]).await, InstructionError::ProgramFailedToComplete);
    assert!(!env.exists(o.pda).await);
    assert_eq!(env.balance(env.alice.pubkey(), usdc).await, ALICE_START);
}

#[tokio::test]
async fn an_order_id_cannot_be_funded_twice_while_open() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let o = env.funded_order(usdc, PRICE).await;
    let deadline = env.now().await + DAY;
    assert_ix_err(env.fund(&o, deadline, 0).await, SYSTEM_ACCOUNT_ALREADY_IN_USE);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance(env.alice.pubkey(), usdc).await, ALICE_START - PRICE);
}

#[tokio::test]
async fn a_vault_created_before_funding_does_not_block_it() {
    // Issue 20 item 10: Mallory knows the next order id, so she knows its PDA and the vault
    // address (the PDA's associated token account), and creates that account first, with a few
    // tokens of her own in it. Funding accepts the existing account (the idempotent ATA create)
    // and the order settles; her tokens are surplus, swept like any tokens sent unasked.
    let mut env = Env::new().await;
    let (usdc, t22) = (env.usdc, env.t22);
    let (alice, bob, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.mallory));
    env.mint_to(usdc, mallory.pubkey(), 7).await;
    for m in [usdc, t22] {
        let o = env.order_ref(m, PRICE);
        let ix = spl_associated_token_account::instruction::create_associated_token_account(
            &mallory.pubkey(),
            &o.pda,
            &m.mint,
            &m.token_program,
        );
        env.send(vec![ix], &[&mallory]).await.unwrap();
        assert!(env.exists(o.vault).await, "the vault exists before funding");
        if m.mint == usdc.mint {
            env.transfer_tokens(usdc, &mallory, o.vault, 7).await;
        }
        let deadline = env.now().await + DAY;
        env.fund(&o, deadline, 0).await.unwrap();
        let surplus = if m.mint == usdc.mint { 7 } else { 0 };
        assert_eq!(env.balance_of(o.vault).await, PRICE + surplus);
        assert_eq!(env.order(&o).await.unwrap().amount, PRICE);
        env.deliver(&o, &bob).await.unwrap();
        env.release(&o, &alice).await.unwrap();
        assert!(!env.exists(o.vault).await);
        assert!(!env.exists(o.pda).await);
    }
    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, PRICE - FEE);
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, FEE + 7, "Mallory's tokens swept to the treasury");
}

#[tokio::test]
async fn an_existing_vault_must_be_the_order_s_own_associated_token_account() {
    // The account passed as vault already exists but is not the order PDA's ATA for this mint
    // and token program: Alice's own USDC account, or the PDA's ATA for another mint.
    let mut env = Env::new().await;
    let (usdc, stray) = (env.usdc, env.stray);
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));
    let deadline = env.now().await + DAY;
    let expires_at = env.now().await + PAYMENT_WINDOW;

    let o = env.order_ref(usdc, PRICE);
    let mut accounts = env.fund_accounts(&o);
    accounts.vault = env.ata(env.bob.pubkey(), usdc);
    let ix = env.ix_fund_with(&o, accounts, deadline, 0, expires_at);
    assert_anchor_err(env.send(vec![ix], &[&alice, &pat]).await, Anchor::ConstraintTokenOwner);

    let other_mint_vault = env.create_ata(o.pda, stray).await;
    let mut accounts = env.fund_accounts(&o);
    accounts.vault = other_mint_vault;
    let ix = env.ix_fund_with(&o, accounts, deadline, 0, expires_at);
    assert_anchor_err(env.send(vec![ix], &[&alice, &pat]).await, Anchor::ConstraintTokenMint);
    assert!(!env.exists(o.pda).await);
    assert_eq!(env.balance(env.alice.pubkey(), usdc).await, ALICE_START);
}

// ---------------------------------------------------------------- deliver

#[tokio::test]
async fn bob_or_pat_marks_delivery_and_nobody_else() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, pat, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.platform), kp(&env.mallory));
    let o = env.funded_order(usdc, PRICE).await;

    assert_escrow_err(env.deliver(&o, &alice).await, EscrowError::NotSellerOrPlatform);
    assert_escrow_err(env.deliver(&o, &mallory).await, EscrowError::NotSellerOrPlatform);
    env.warp_by(3600).await;
    env.deliver(&o, &bob).await.unwrap();
    let order = env.order(&o).await.unwrap();
    assert_eq!(order.state, OrderState::Delivered);
    assert_eq!(order.delivered_at, START_TIME + 3600);
    assert_escrow_err(env.deliver(&o, &bob).await, EscrowError::OrderNotFunded);

    let o2 = env.funded_order(usdc, PRICE).await;
    env.deliver(&o2, &pat).await.unwrap();
    assert_eq!(env.order(&o2).await.unwrap().state, OrderState::Delivered);
}

// ---------------------------------------------------------------- release

async fn assert_paid_out(env: &mut Env, o: &OrderRef, alice_lamports_before_fund: u64, buyer: u64, seller: u64, fee: u64) {
    let (alice, bob, trent) = (env.alice.pubkey(), env.bob.pubkey(), env.trent.pubkey());
    assert_eq!(buyer + seller + fee, o.amount, "payouts sum to the deposit");
    assert_eq!(env.balance(alice, o.mint).await, ALICE_START - o.amount + buyer);
    assert_eq!(env.balance(bob, o.mint).await, seller);
    assert_eq!(env.balance(trent, o.mint).await, fee);
    assert!(!env.exists(o.vault).await, "vault closed");
    assert!(!env.exists(o.pda).await, "order closed");
    assert_eq!(env.lamports(alice).await, alice_lamports_before_fund, "all rent back to Alice");
}

#[tokio::test]
async fn alice_releases_bob_gets_the_price_minus_the_fee_and_alice_her_rent() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let alice = kp(&env.alice);
    let before = env.lamports(alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    env.release(&o, &alice).await.unwrap();
    assert_paid_out(&mut env, &o, before, 0, PRICE - FEE, FEE).await;
}

#[tokio::test]
async fn pat_releases_a_delivered_token_2022_order_for_alice() {
    let mut env = Env::new().await;
    let t22 = env.t22;
    let (bob, pat) = (kp(&env.bob), kp(&env.platform));
    let before = env.lamports(env.alice.pubkey()).await;
    let o = env.funded_order(t22, PRICE).await;
    env.deliver(&o, &bob).await.unwrap();
    env.release(&o, &pat).await.unwrap();
    assert_paid_out(&mut env, &o, before, 0, PRICE - FEE, FEE).await;
}

#[tokio::test]
async fn neither_bob_nor_mallory_can_release_and_a_disputed_order_cannot_be_released() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.mallory));
    let o = env.funded_order(usdc, PRICE).await;
    assert_escrow_err(env.release(&o, &bob).await, EscrowError::NotBuyerOrPlatform);
    assert_escrow_err(env.release(&o, &mallory).await, EscrowError::NotBuyerOrPlatform);
    env.dispute(&o, &bob).await.unwrap();
    assert_escrow_err(env.release(&o, &alice).await, EscrowError::OrderNotFundedOrDelivered);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
}

#[tokio::test]
async fn release_refuses_swapped_accounts() {
    let mut env = Env::new().await;
    let (usdc, t22) = (env.usdc, env.t22);
    let alice = kp(&env.alice);
    let o = env.funded_order(usdc, PRICE).await;
    let other = env.funded_order(usdc, PRICE).await;
    let mallory = env.mallory.pubkey();

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.vault = other.vault; // another order's vault
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::ConstraintTokenOwner);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.mint = t22.mint; // wrong mint
    a.token_program = t22.token_program;
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::ConstraintHasOne);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.token_program = anchor_spl::token_2022::ID; // wrong token program for this mint
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::ConstraintMintTokenProgram);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.token_program = solana_sdk::system_program::ID; // arbitrary program instead of a token program
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::InvalidProgramId);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.seller_token_account = env.ata(mallory, usdc); // payout to a third party
    assert_escrow_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, EscrowError::SellerTokenAccountMismatch);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.treasury_token_account = env.ata(mallory, usdc); // fee to a third party
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::ConstraintTokenOwner);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.rent_payer = mallory; // rent to a third party
    assert_escrow_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, EscrowError::RentReceiverMismatch);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.order = other.pda; // the other order with this order's vault
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::ConstraintTokenOwner);

    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance_of(other.vault).await, PRICE);
    env.release(&o, &alice).await.unwrap();
}

#[tokio::test]
async fn a_forged_order_account_is_refused() {
    // Mallory copies a real order's bytes into an account she owns and names herself seller.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let alice = kp(&env.alice);
    let o = env.funded_order(usdc, PRICE).await;
    let mut order = env.order(&o).await.unwrap();
    order.seller = env.mallory.pubkey();
    let mut data = vec![];
    order.try_serialize(&mut data).unwrap();
    let fake = Keypair::new().pubkey();
    env.ctx.set_account(
        &fake,
        &solana_sdk::account::Account { lamports: 10_000_000, data, owner: solana_sdk::system_program::ID, executable: false, rent_epoch: 0 }
            .into(),
    );
    let mut a = env.release_accounts(&o, alice.pubkey());
    a.order = fake;
    a.seller_token_account = env.ata(env.mallory.pubkey(), usdc);
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::AccountOwnedByWrongProgram);
}

#[tokio::test]
async fn a_settled_order_can_be_neither_released_again_nor_revived() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let o = env.funded_order(usdc, PRICE).await;

    // Release, then in the same transaction Mallory tops the dead order account back up with rent.
    let payer = env.ctx.payer.pubkey();
    let top_up = system_instruction::transfer(&payer, &o.pda, 10_000_000);
    let release = env.ix_release(&o, alice.pubkey());
    env.send(vec![release, top_up], &[&alice]).await.unwrap();
    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, PRICE - FEE);

    // The revived account belongs to the system program with no data: every instruction refuses it.
    assert_anchor_err(env.release(&o, &alice).await, Anchor::AccountOwnedByWrongProgram);
    assert_anchor_err(env.deliver(&o, &bob).await, Anchor::AccountOwnedByWrongProgram);
    assert_anchor_err(env.refund(&o, &bob).await, Anchor::AccountOwnedByWrongProgram);
    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, PRICE - FEE);
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, FEE);

    // Plain double release of a closed (not revived) order.
    let o2 = env.funded_order(usdc, PRICE).await;
    env.release(&o2, &alice).await.unwrap();
    assert_anchor_err(env.release(&o2, &alice).await, Anchor::AccountNotInitialized);
    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, 2 * (PRICE - FEE));
}

#[tokio::test]
async fn tokens_sent_into_a_vault_unasked_never_block_settlement() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, mallory) = (kp(&env.alice), kp(&env.mallory));
    env.mint_to(usdc, mallory.pubkey(), 5).await;
    let o = env.funded_order(usdc, PRICE).await;
    env.transfer_tokens(usdc, &mallory, o.vault, 5).await;
    env.release(&o, &alice).await.unwrap();
    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, PRICE - FEE);
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, FEE + 5, "surplus swept to the treasury");
    assert!(!env.exists(o.vault).await);
}

#[tokio::test]
async fn a_buyer_who_reassigns_her_wallet_cannot_block_any_settlement() {
    // Issue 8: after funding, Alice assigns her own wallet to a program she controls. The rent
    // receiver is checked by address only, so every terminal path still settles and the rent still
    // reaches her address, whatever owns it.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, carol, pat, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.platform), kp(&env.mallory));
    let released = env.funded_order(usdc, PRICE).await;
    let claimed = env.funded_order(usdc, PRICE).await;
    env.deliver(&claimed, &bob).await.unwrap();
    let refunded = env.funded_order(usdc, PRICE).await;
    let resolved = env.funded_order(usdc, PRICE).await;
    env.dispute(&resolved, &alice).await.unwrap();

    let her_program = Keypair::new().pubkey();
    env.send(vec![system_instruction::assign(&alice.pubkey(), &her_program)], &[&alice]).await.unwrap();
    assert_eq!(env.owner(alice.pubkey()).await, her_program);
    env.warp_by(REVIEW_WINDOW).await;

    let steps: [(&OrderRef, &str); 4] = [(&released, "release"), (&claimed, "claim"), (&refunded, "refund"), (&resolved, "resolve")];
    for (o, how) in steps {
        let rent = env.lamports(o.pda).await + env.lamports(o.vault).await;
        let before = env.lamports(alice.pubkey()).await;
        let result = match how {
            "release" => env.release(o, &pat).await,
            "claim" => env.claim(o, &mallory).await,
            "refund" => env.refund(o, &bob).await,
            _ => env.resolve(o, &carol, 5_000).await,
        };
        result.unwrap_or_else(|e| panic!("{how} blocked: {e:?}"));
        assert_eq!(env.lamports(alice.pubkey()).await, before + rent, "{how}: rent back to Alice's address");
        assert!(!env.exists(o.pda).await && !env.exists(o.vault).await, "{how}: closed");
        assert_eq!(env.owner(alice.pubkey()).await, her_program);
    }
    let half = escrow::payout::split(PRICE, 5_000, FEE_BPS).unwrap();
    assert_eq!(env.balance(bob.pubkey(), usdc).await, 2 * (PRICE - FEE) + half.seller);
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START - 4 * PRICE + PRICE + half.buyer);
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, 2 * FEE + half.fee);
}

#[tokio::test]
async fn fees_go_to_the_treasury_snapshotted_at_funding() {
    // The admin moves the treasury to Mallory after funding: open orders still pay the old one,
    // and a payout naming the new treasury's account is refused on every path that takes a fee.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (admin, alice, bob, carol, mallory) = (kp(&env.admin), kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.mallory));
    let released = env.funded_order(usdc, PRICE).await;
    let claimed = env.funded_order(usdc, PRICE).await;
    env.deliver(&claimed, &bob).await.unwrap();
    let resolved = env.funded_order(usdc, PRICE).await;
    env.dispute(&resolved, &alice).await.unwrap();
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { treasury: Some(mallory.pubkey()), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    env.warp_by(REVIEW_WINDOW).await;
    let new_treasury = env.ata(mallory.pubkey(), usdc);

    let mut a = env.release_accounts(&released, alice.pubkey());
    a.treasury_token_account = new_treasury;
    assert_anchor_err(env.send(vec![env.ix_release_with(a)], &[&alice]).await, Anchor::ConstraintTokenOwner);
    let mut a = env.claim_accounts(&claimed, mallory.pubkey());
    a.treasury_token_account = new_treasury;
    assert_anchor_err(env.send(vec![env.ix_claim_with(a)], &[&mallory]).await, Anchor::ConstraintTokenOwner);
    let mut a = env.resolve_accounts(&resolved, carol.pubkey());
    a.treasury_token_account = new_treasury;
    assert_anchor_err(env.send(vec![env.ix_resolve_with(a, 0)], &[&carol]).await, Anchor::ConstraintTokenOwner);

    env.release(&released, &alice).await.unwrap();
    env.claim(&claimed, &mallory).await.unwrap();
    env.resolve(&resolved, &carol, 0).await.unwrap();
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, 3 * FEE);
    assert_eq!(env.balance(mallory.pubkey(), usdc).await, 0);
}

// ---------------------------------------------------------------- claim

#[tokio::test]
async fn after_the_review_window_anyone_can_claim_for_bob() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (bob, mallory) = (kp(&env.bob), kp(&env.mallory));
    let before = env.lamports(env.alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;

    assert_escrow_err(env.claim(&o, &mallory).await, EscrowError::OrderNotDelivered);
    env.deliver(&o, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW - 1).await;
    assert_escrow_err(env.claim(&o, &mallory).await, EscrowError::ReviewWindowNotElapsed);
    env.warp_by(1).await;
    env.claim(&o, &mallory).await.unwrap();
    assert_paid_out(&mut env, &o, before, 0, PRICE - FEE, FEE).await;
    assert_eq!(env.balance(env.mallory.pubkey(), usdc).await, 0, "the cranker gets nothing");
}

#[tokio::test]
async fn claim_refuses_a_third_party_seller_account_and_a_disputed_order() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.mallory));
    let o = env.funded_order(usdc, PRICE).await;
    env.deliver(&o, &bob).await.unwrap();
    env.dispute(&o, &alice).await.unwrap();
    env.warp_by(REVIEW_WINDOW + 1).await;
    assert_escrow_err(env.claim(&o, &mallory).await, EscrowError::OrderNotDelivered);

    let o2 = env.funded_order(usdc, PRICE).await;
    env.deliver(&o2, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW).await;
    let mut a = env.claim_accounts(&o2, mallory.pubkey());
    a.seller_token_account = env.ata(mallory.pubkey(), usdc);
    assert_escrow_err(env.send(vec![env.ix_claim_with(a)], &[&mallory]).await, EscrowError::SellerTokenAccountMismatch);
}

#[tokio::test]
async fn the_cranker_takes_neither_the_fee_nor_the_rent() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (bob, mallory) = (kp(&env.bob), kp(&env.mallory));
    let before = env.lamports(env.alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    env.deliver(&o, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW).await;

    let mut a = env.claim_accounts(&o, mallory.pubkey());
    a.treasury_token_account = env.ata(mallory.pubkey(), usdc);
    assert_anchor_err(env.send(vec![env.ix_claim_with(a)], &[&mallory]).await, Anchor::ConstraintTokenOwner);
    let mut a = env.claim_accounts(&o, mallory.pubkey());
    a.rent_payer = mallory.pubkey();
    assert_escrow_err(env.send(vec![env.ix_claim_with(a)], &[&mallory]).await, EscrowError::RentReceiverMismatch);
    assert_eq!(env.balance_of(o.vault).await, PRICE);

    env.claim(&o, &mallory).await.unwrap();
    assert_paid_out(&mut env, &o, before, 0, PRICE - FEE, FEE).await;
}

// ---------------------------------------------------------------- disputes

#[tokio::test]
async fn alice_disputes_and_carol_splits_thirty_seventy() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, carol) = (kp(&env.alice), kp(&env.carol));
    let before = env.lamports(alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    env.warp_by(60).await;
    env.dispute(&o, &alice).await.unwrap();
    let order = env.order(&o).await.unwrap();
    assert_eq!((order.state, order.disputed_at), (OrderState::Disputed, START_TIME + 60));

    env.resolve(&o, &carol, 3_000).await.unwrap();
    let buyer = PRICE * 3 / 10;
    let fee = (PRICE - buyer) * FEE_BPS as u64 / 10_000;
    assert_paid_out(&mut env, &o, before, buyer, PRICE - buyer - fee, fee).await;
}

#[tokio::test]
async fn carol_can_give_everything_to_either_side() {
    let mut env = Env::new().await;
    let t22 = env.t22;
    let (bob, carol, pat) = (kp(&env.bob), kp(&env.carol), kp(&env.platform));
    let before = env.lamports(env.alice.pubkey()).await;
    let o = env.funded_order(t22, PRICE).await;
    env.dispute(&o, &pat).await.unwrap();
    env.resolve(&o, &carol, 10_000).await.unwrap();
    assert_paid_out(&mut env, &o, before, PRICE, 0, 0).await;

    let o = env.funded_order(t22, 1_000_003).await;
    env.dispute(&o, &bob).await.unwrap();
    env.resolve(&o, &carol, 0).await.unwrap();
    // 1_000_003 * 2.5% = 25_000.075 -> 25_000
    assert_eq!(env.balance(env.bob.pubkey(), t22).await, 1_000_003 - 25_000);
    assert_eq!(env.balance(env.trent.pubkey(), t22).await, 25_000);
    assert_eq!(env.balance(env.alice.pubkey(), t22).await, ALICE_START - 1_000_003);
}

#[tokio::test]
async fn disputes_close_when_auto_release_is_due_and_only_parties_open_them() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.mallory));
    let o = env.funded_order(usdc, PRICE).await;
    assert_escrow_err(env.dispute(&o, &mallory).await, EscrowError::NotOrderParty);
    env.deliver(&o, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW - 1).await;
    let o_last_second = o;
    env.warp_by(1).await;
    assert_escrow_err(env.dispute(&o_last_second, &alice).await, EscrowError::ReviewWindowElapsed);

    // One second earlier it would have worked; and a dispute cannot be opened twice.
    let o2 = env.funded_order(usdc, PRICE).await;
    env.deliver(&o2, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW - 1).await;
    env.dispute(&o2, &alice).await.unwrap();
    assert_escrow_err(env.dispute(&o2, &bob).await, EscrowError::OrderNotFundedOrDelivered);
}

#[tokio::test]
async fn only_carol_resolves_and_only_to_the_parties_accounts() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, carol, mallory, pat) = (kp(&env.alice), kp(&env.carol), kp(&env.mallory), kp(&env.platform));
    let o = env.funded_order(usdc, PRICE).await;
    assert_escrow_err(env.resolve(&o, &carol, 5_000).await, EscrowError::OrderNotDisputed);
    env.dispute(&o, &alice).await.unwrap();

    assert_escrow_err(env.resolve(&o, &mallory, 0).await, EscrowError::NotArbiter);
    assert_escrow_err(env.resolve(&o, &pat, 0).await, EscrowError::NotArbiter);
    assert_escrow_err(env.resolve(&o, &carol, 10_001).await, EscrowError::BuyerBpsTooHigh);

    let mallory_usdc = env.ata(mallory.pubkey(), usdc);
    let mut a = env.resolve_accounts(&o, carol.pubkey());
    a.buyer_token_account = mallory_usdc;
    assert_escrow_err(env.send(vec![env.ix_resolve_with(a, 5_000)], &[&carol]).await, EscrowError::BuyerTokenAccountMismatch);
    let mut a = env.resolve_accounts(&o, carol.pubkey());
    a.seller_token_account = mallory_usdc;
    assert_escrow_err(env.send(vec![env.ix_resolve_with(a, 5_000)], &[&carol]).await, EscrowError::SellerTokenAccountMismatch);
    let mut a = env.resolve_accounts(&o, carol.pubkey());
    a.treasury_token_account = mallory_usdc;
    assert_anchor_err(env.send(vec![env.ix_resolve_with(a, 5_000)], &[&carol]).await, Anchor::ConstraintTokenOwner);
    let mut a = env.resolve_accounts(&o, carol.pubkey());
    a.rent_payer = mallory.pubkey();
    assert_escrow_err(env.send(vec![env.ix_resolve_with(a, 5_000)], &[&carol]).await, EscrowError::RentReceiverMismatch);
    // Carol's signature on a config she is not named in: a non-signing arbiter slot.
    let mut ix = env.ix_resolve_dispute(&o, carol.pubkey(), 5_000);
    ix.accounts[0].is_signer = false;
    assert_anchor_err(env.send(vec![ix], &[]).await, Anchor::AccountNotSigner);

    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance(mallory.pubkey(), usdc).await, 0);
    env.resolve(&o, &carol, 5_000).await.unwrap();
}

// ---------------------------------------------------------------- refunds

#[tokio::test]
async fn bob_refunds_a_delivered_order_in_full_without_fee() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let bob = kp(&env.bob);
    let before = env.lamports(env.alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    env.deliver(&o, &bob).await.unwrap();
    env.refund(&o, &bob).await.unwrap();
    assert_paid_out(&mut env, &o, before, PRICE, 0, 0).await;
}

#[tokio::test]
async fn pat_refunds_a_disputed_order() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));
    let before = env.lamports(alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    env.dispute(&o, &alice).await.unwrap();
    env.refund(&o, &pat).await.unwrap();
    assert_paid_out(&mut env, &o, before, PRICE, 0, 0).await;
}

#[tokio::test]
async fn alice_alone_refunds_only_after_bob_missed_the_deadline() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.mallory));
    let before = env.lamports(alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&o).await.unwrap().delivery_deadline;

    assert_escrow_err(env.refund(&o, &alice).await, EscrowError::BuyerRefundNotAllowed);
    env.warp_to(deadline).await;
    assert_escrow_err(env.refund(&o, &alice).await, EscrowError::BuyerRefundNotAllowed);
    assert_escrow_err(env.refund(&o, &mallory).await, EscrowError::NotOrderParty);

    let mut a = env.refund_accounts(&o, alice.pubkey());
    a.buyer_token_account = env.ata(mallory.pubkey(), usdc);
    env.warp_to(deadline + 1).await;
    let mut r = env.refund_accounts(&o, alice.pubkey());
    r.rent_payer = mallory.pubkey();
    assert_escrow_err(env.send(vec![env.ix_refund_with(r)], &[&alice]).await, EscrowError::RentReceiverMismatch);
    assert_escrow_err(env.send(vec![env.ix_refund_with(a)], &[&alice]).await, EscrowError::BuyerTokenAccountMismatch);

    env.refund(&o, &alice).await.unwrap();
    assert_paid_out(&mut env, &o, before, PRICE, 0, 0).await;

    // An on-time delivery closes the door on a buyer-only refund (she may dispute instead).
    let o2 = env.funded_order(usdc, PRICE).await;
    env.deliver(&o2, &bob).await.unwrap();
    env.warp_by(8 * DAY).await;
    assert_escrow_err(env.refund(&o2, &alice).await, EscrowError::BuyerRefundNotAllowed);
}

#[tokio::test]
async fn a_seller_who_missed_the_deadline_cannot_lock_the_buyer_out() {
    // Issue 20 item 11. Deadline rule: once the delivery deadline has passed without an on-time
    // delivery, Alice may take her money back alone: a late delivery only lets Bob keep the order
    // if she accepts it within the review window, and a dispute (his or hers) does not stop the
    // clock. Before, a late `mark_delivered` or an `open_dispute` left her waiting on him or Carol.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let alice_key = alice.pubkey();

    // Late delivery: Alice refunds during the review window.
    let late = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&late).await.unwrap().delivery_deadline;
    env.warp_to(deadline + 1).await;
    env.deliver(&late, &bob).await.unwrap();
    env.refund(&late, &alice).await.unwrap();
    assert!(!env.exists(late.pda).await);
    assert_eq!(env.balance(alice_key, usdc).await, ALICE_START);

    // Late delivery left unanswered for the whole review window: the claim is Bob's, no race.
    let unanswered = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&unanswered).await.unwrap().delivery_deadline;
    env.warp_to(deadline + 1).await;
    env.deliver(&unanswered, &bob).await.unwrap();
    let due = env.order(&unanswered).await.unwrap().auto_release_at().unwrap();
    env.warp_to(due - 1).await;
    env.refund(&unanswered, &alice).await.unwrap(); // the last second of the window is still hers
    assert!(!env.exists(unanswered.pda).await);
    let unanswered = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&unanswered).await.unwrap().delivery_deadline;
    env.warp_to(deadline + 1).await;
    env.deliver(&unanswered, &bob).await.unwrap();
    let due = env.order(&unanswered).await.unwrap().auto_release_at().unwrap();
    env.warp_to(due).await;
    assert_escrow_err(env.refund(&unanswered, &alice).await, EscrowError::BuyerRefundNotAllowed);
    env.claim(&unanswered, &bob).await.unwrap();

    // Bob disputes a funded order: refused while the deadline runs, Alice's once it has passed,
    // whether or not he delivered late meanwhile (he cannot: a disputed order is not Funded).
    let disputed = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&disputed).await.unwrap().delivery_deadline;
    env.dispute(&disputed, &bob).await.unwrap();
    env.warp_to(deadline).await;
    assert_escrow_err(env.refund(&disputed, &alice).await, EscrowError::BuyerRefundNotAllowed);
    env.warp_to(deadline + 1).await;
    env.refund(&disputed, &alice).await.unwrap();
    assert!(!env.exists(disputed.pda).await);

    // A dispute after a late delivery: still hers, even once auto-release would have been due.
    let late_disputed = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&late_disputed).await.unwrap().delivery_deadline;
    env.warp_to(deadline + 1).await;
    env.deliver(&late_disputed, &bob).await.unwrap();
    env.dispute(&late_disputed, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW + 1).await;
    env.refund(&late_disputed, &alice).await.unwrap();

    // Delivered on time (exactly at the deadline) and then disputed: Carol decides, not Alice.
    let on_time = env.funded_order(usdc, PRICE).await;
    let deadline = env.order(&on_time).await.unwrap().delivery_deadline;
    env.warp_to(deadline).await;
    env.deliver(&on_time, &bob).await.unwrap();
    env.dispute(&on_time, &alice).await.unwrap();
    env.warp_by(1).await;
    assert_escrow_err(env.refund(&on_time, &alice).await, EscrowError::BuyerRefundNotAllowed);

    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, PRICE - FEE, "Bob was paid only for the claimed order");
}

// ---------------------------------------------------------------- events

#[tokio::test]
async fn every_state_change_is_announced_with_an_event() {
    use escrow::events::*;
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, carol, pat) = (kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.platform));

    let o = env.order_ref(usdc, PRICE);
    let deadline = START_TIME + DAY;
    let ix = env.ix_fund(&o, deadline, 0, START_TIME + PAYMENT_WINDOW);
    let logs = env.send_with_logs(vec![ix], &[&alice, &pat]).await;
    let e: OrderFunded = find_event(&logs).expect("OrderFunded");
    assert_eq!((e.order, e.order_id, e.amount, e.buyer, e.seller), (o.pda, o.id, PRICE, alice.pubkey(), bob.pubkey()));
    assert_eq!((e.fee_bps, e.delivery_deadline, e.review_window, e.funded_at), (FEE_BPS, deadline, REVIEW_WINDOW, START_TIME));

    let logs = env.send_with_logs(vec![env.ix_mark_delivered(&o, bob.pubkey())], &[&bob]).await;
    let e: OrderDelivered = find_event(&logs).expect("OrderDelivered");
    assert_eq!((e.by, e.delivered_at, e.auto_release_at), (bob.pubkey(), START_TIME, START_TIME + REVIEW_WINDOW));

    let logs = env.send_with_logs(vec![env.ix_open_dispute(&o, alice.pubkey())], &[&alice]).await;
    let e: DisputeOpened = find_event(&logs).expect("DisputeOpened");
    assert_eq!((e.order, e.by), (o.pda, alice.pubkey()));

    let logs = env.send_with_logs(vec![env.ix_resolve_dispute(&o, carol.pubkey(), 2_500)], &[&carol]).await;
    let e: DisputeResolved = find_event(&logs).expect("DisputeResolved");
    let p = escrow::payout::split(PRICE, 2_500, FEE_BPS).unwrap();
    assert_eq!((e.buyer_bps, e.buyer_amount, e.seller_amount, e.fee), (2_500, p.buyer, p.seller, p.fee));

    let o = env.funded_order(usdc, PRICE).await;
    let logs = env.send_with_logs(vec![env.ix_release(&o, pat.pubkey())], &[&pat]).await;
    let e: OrderReleased = find_event(&logs).expect("OrderReleased");
    assert_eq!((e.by, e.seller_amount, e.fee), (pat.pubkey(), PRICE - FEE, FEE));

    let o = env.funded_order(usdc, PRICE).await;
    env.deliver(&o, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW).await;
    let logs = env.send_with_logs(vec![env.ix_claim(&o, bob.pubkey())], &[&bob]).await;
    let e: OrderClaimed = find_event(&logs).expect("OrderClaimed");
    assert_eq!((e.by, e.seller_amount, e.fee), (bob.pubkey(), PRICE - FEE, FEE));

    let o = env.funded_order(usdc, PRICE).await;
    let logs = env.send_with_logs(vec![env.ix_refund(&o, bob.pubkey())], &[&bob]).await;
    let e: OrderRefunded = find_event(&logs).expect("OrderRefunded");
    assert_eq!((e.by, e.amount), (bob.pubkey(), PRICE));

    let admin = kp(&env.admin);
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { fee_bps: Some(300), ..Default::default() });
    let logs = env.send_with_logs(vec![ix], &[&admin]).await;
    let e: ConfigUpdated = find_event(&logs).expect("ConfigUpdated");
    assert_eq!((e.fee_bps, e.arbiter), (300, carol.pubkey()));
}
