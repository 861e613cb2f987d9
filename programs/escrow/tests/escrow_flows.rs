//! Stories of one order each: Alice buys from Bob, Pat (the platform key) co-signs and may act
//! for either, Carol arbitrates, Trent's wallet collects the fee, Mallory tries her luck.

#![allow(deprecated)]

mod common;

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::AccountSerialize;
use common::*;
use escrow::errors::EscrowError;
use escrow::state::OrderState;
use escrow::UpdateConfigArgs;
use solana_sdk::{signature::Keypair, signer::Signer, system_instruction};

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
    assert_fails(env.send(vec![ix], &[&mallory]).await);
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
    assert_fails(env.fund(&greedy, deadline, 0).await);
    assert!(!env.exists(greedy.pda).await);
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
    let ix = env.ix_fund_with(&o, accounts, deadline, 0);
    assert_escrow_err(env.send(vec![ix], &[&alice, &mallory]).await, EscrowError::PlatformAuthorityMismatch);

    // Pat's key is named but Pat did not sign.
    let mut ix = env.ix_fund(&o, deadline, 0);
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
    let usdc = env.usdc;
    let deadline = env.now().await + DAY;
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));

    // USDC is an SPL Token mint; claiming it lives under Token-2022 is refused.
    let mut lying = env.order_ref(usdc, PRICE);
    lying.mint.token_program = anchor_spl::token_2022::ID;
    lying.vault = env.ata(lying.pda, lying.mint);
    assert_fails(env.fund(&lying, deadline, 0).await);

    // Paying from Mallory's account (Alice is not its authority).
    let mallory_usdc = env.ata(env.mallory.pubkey(), usdc);
    let o = env.order_ref(usdc, PRICE);
    let mut accounts = env.fund_accounts(&o);
    accounts.buyer_token_account = mallory_usdc;
    let ix = env.ix_fund_with(&o, accounts, deadline, 0);
    assert_anchor_err(env.send(vec![ix], &[&alice, &pat]).await, Anchor::ConstraintTokenOwner);

    // A vault that is not the order PDA's associated token account.
    let mut accounts = env.fund_accounts(&o);
    accounts.vault = env.ata(env.mallory.pubkey(), usdc);
    let ix = env.ix_fund_with(&o, accounts, deadline, 0);
    assert_fails(env.send(vec![ix], &[&alice, &pat]).await);
    assert!(!env.exists(o.pda).await);
}

#[tokio::test]
async fn an_order_id_cannot_be_funded_twice_while_open() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let o = env.funded_order(usdc, PRICE).await;
    let deadline = env.now().await + DAY;
    assert_fails(env.fund(&o, deadline, 0).await);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance(env.alice.pubkey(), usdc).await, ALICE_START - PRICE);
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
    assert_fails(env.send(vec![env.ix_release_with(a)], &[&alice]).await);

    let mut a = env.release_accounts(&o, alice.pubkey());
    a.token_program = solana_sdk::system_program::ID; // arbitrary program instead of a token program
    assert_fails(env.send(vec![env.ix_release_with(a)], &[&alice]).await);

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
    assert_fails(env.send(vec![env.ix_release_with(a)], &[&alice]).await);

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
    assert_fails(env.release(&o, &alice).await);
    assert_fails(env.deliver(&o, &bob).await);
    assert_fails(env.refund(&o, &bob).await);
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
    assert_escrow_err(env.send(vec![env.ix_refund_with(a)], &[&alice]).await, EscrowError::BuyerTokenAccountMismatch);

    env.refund(&o, &alice).await.unwrap();
    assert_paid_out(&mut env, &o, before, PRICE, 0, 0).await;

    // Late delivery closes the door on a buyer-only refund.
    let o2 = env.funded_order(usdc, PRICE).await;
    env.warp_by(8 * DAY).await;
    env.deliver(&o2, &bob).await.unwrap();
    assert_escrow_err(env.refund(&o2, &alice).await, EscrowError::BuyerRefundNotAllowed);
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
    let logs = env.send_with_logs(vec![env.ix_fund(&o, deadline, 0)], &[&alice, &pat]).await;
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
