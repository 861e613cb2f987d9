//! Issue 24: milestone escrows (`fund_milestone`), revisions (`request_revision`), deadline
//! extensions (`extend_deadline`) and settlement by agreement (`propose_settlement`,
//! `accept_settlement`, `withdraw_settlement`). For each: the happy path, every wrong signer,
//! swapped accounts, the bounds and re-initialisation.
//!
//! Cast as in `common`: Alice buys, Bob sells, Carol arbitrates, Pat is the platform, Trent's
//! wallet owns the treasury, Mallory is an outsider.
#![allow(deprecated)]

mod common;

use anchor_lang::error::ErrorCode as Anchor;
use common::*;
use escrow::errors::EscrowError;
use escrow::events::{DeadlineExtended, MilestoneFunded, RevisionRequested, SettlementAccepted, SettlementProposed, SettlementWithdrawn};
use escrow::payout::split;
use escrow::state::{OrderState, SettlementProposal, PARTY_BUYER, PARTY_NONE, PARTY_SELLER};
use escrow::{MAX_MILESTONES, MAX_PROPOSAL_LIFETIME, MIN_REVISION_SECONDS};
use solana_sdk::signer::Signer;

const PRICE: u64 = 40_000_000;

// ---------------------------------------------------------------- fund_milestone

#[tokio::test]
async fn two_milestones_are_funded_in_one_transaction_with_one_buyer_signature() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));
    let first = env.order_ref(usdc, 30_000_000);
    let second = env.milestone_ref(&first, 10_000_000);
    let a1 = env.milestone_args(&first, first.id, 1, 2).await;
    let mut a2 = env.milestone_args(&second, first.id, 2, 1).await;
    a2.delivery_deadline += 7 * DAY;
    let ixs = vec![env.ix_fund_milestone(&first, a1), env.ix_fund_milestone(&second, a2)];
    let logs = env.send_with_logs(ixs, &[&alice, &pat]).await;
    let funded: MilestoneFunded = find_event(&logs).expect("MilestoneFunded");
    assert_eq!((funded.order, funded.parent_order_id, funded.milestone_index, funded.revisions_included), (first.pda, first.id, 1, 2));

    let (m1, m2) = (env.order(&first).await.unwrap(), env.order(&second).await.unwrap());
    assert_eq!((m1.order_id, m1.parent_order_id, m1.milestone_index, m1.revisions_included, m1.revisions_used), (first.id, first.id, 1, 2, 0));
    assert_eq!((m2.order_id, m2.parent_order_id, m2.milestone_index, m2.revisions_included, m2.revisions_used), (second.id, first.id, 2, 1, 0));
    assert_eq!((m1.state, m2.state), (OrderState::Funded, OrderState::Funded));
    assert_eq!(m2.delivery_deadline, a2.delivery_deadline);
    assert_eq!(m1.settlement, SettlementProposal::default());
    assert_eq!(env.balance_of(first.vault).await, 30_000_000);
    assert_eq!(env.balance_of(second.vault).await, 10_000_000);
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START - 40_000_000);
    // Each milestone settles on its own.
    env.release(&first, &alice).await.unwrap();
    assert!(env.exists(second.pda).await);
    env.release(&second, &alice).await.unwrap();
    assert_eq!(env.balance(env.bob.pubkey(), usdc).await, split(30_000_000, 0, FEE_BPS).unwrap().seller + split(10_000_000, 0, FEE_BPS).unwrap().seller);
}

#[tokio::test]
async fn fund_milestone_needs_the_platform_and_the_buyer_s_own_tokens() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, mallory) = (kp(&env.alice), kp(&env.mallory));
    let o = env.order_ref(usdc, PRICE);
    let args = env.milestone_args(&o, o.id, 1, 0).await;

    // Mallory as the platform authority.
    let mut a = env.fund_milestone_accounts(&o);
    a.platform_authority = mallory.pubkey();
    let ix = env.ix_fund_milestone_with(a, args);
    assert_escrow_err(env.send(vec![ix], &[&alice, &mallory]).await, EscrowError::PlatformAuthorityMismatch);

    // Mallory as the buyer, paying from Alice's token account.
    let mut a = env.fund_milestone_accounts(&o);
    a.buyer = mallory.pubkey();
    a.rent_payer = mallory.pubkey();
    let pat = kp(&env.platform);
    let ix = env.ix_fund_milestone_with(a, args);
    assert_anchor_err(env.send(vec![ix], &[&mallory, &pat]).await, Anchor::ConstraintTokenOwner);

    // Alice selling to herself.
    let mut a = env.fund_milestone_accounts(&o);
    a.seller = alice.pubkey();
    let ix = env.ix_fund_milestone_with(a, args);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::BuyerIsSeller);
    assert!(!env.exists(o.pda).await);
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START);
}

#[tokio::test]
async fn fund_milestone_refuses_swapped_accounts() {
    let mut env = Env::new().await;
    let (usdc, stray) = (env.usdc, env.stray);
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));
    let other = env.funded_order(usdc, PRICE).await;
    let o = env.order_ref(usdc, PRICE);
    let args = env.milestone_args(&o, o.id, 1, 0).await;

    let mut a = env.fund_milestone_accounts(&o);
    a.vault = other.vault; // another order's vault
    let ix = env.ix_fund_milestone_with(a, args);
    assert_anchor_err(env.send(vec![ix], &[&alice, &pat]).await, Anchor::ConstraintTokenOwner);

    let s = env.order_ref(stray, PRICE); // a mint the config does not allow
    let args_s = env.milestone_args(&s, s.id, 1, 0).await;
    let ix = env.ix_fund_milestone(&s, args_s);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::MintNotAllowed);

    let mut a = env.fund_milestone_accounts(&o);
    a.order = other.pda; // the order PDA of another escrow id
    let ix = env.ix_fund_milestone_with(a, args);
    assert_anchor_err(env.send(vec![ix], &[&alice, &pat]).await, Anchor::ConstraintSeeds);
    assert!(!env.exists(o.pda).await);
    assert_eq!(env.balance_of(other.vault).await, PRICE);
}

#[tokio::test]
async fn fund_milestone_refuses_mints_whose_extensions_can_touch_a_vault() {
    // Allow-listed, but a permanent delegate or a transfer fee could drain or tax the vault.
    let mut env = Env::new().await;
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));
    for m in [env.t22_delegate, env.t22_fee] {
        let o = env.order_ref(m, PRICE);
        let args = env.milestone_args(&o, o.id, 1, 0).await;
        let ix = env.ix_fund_milestone(&o, args);
        assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::MintExtensionNotAllowed);
        assert!(!env.exists(o.pda).await);
    }
    // A harmless extension is fine.
    let o = env.order_ref(env.t22, PRICE);
    env.fund_milestone(&o, o.id, 1, 0).await.unwrap();
}

#[tokio::test]
async fn fund_milestone_bounds_the_index_and_the_terms() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, pat) = (kp(&env.alice), kp(&env.platform));
    let parent = env.order_ref(usdc, PRICE);
    let o = env.milestone_ref(&parent, PRICE);
    let tx = |args: escrow::FundMilestoneArgs, env: &Env| env.ix_fund_milestone(&o, args);
    let base = env.milestone_args(&o, parent.id, 2, 0).await;
    for index in [0, MAX_MILESTONES + 1, u8::MAX] {
        let ix = tx(escrow::FundMilestoneArgs { milestone_index: index, ..base }, &env);
        assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::InvalidMilestone);
    }
    // Milestone 1 is the order itself: its escrow id is the parent's, and only its.
    let ix = tx(escrow::FundMilestoneArgs { milestone_index: 1, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::InvalidMilestone);
    let ix = tx(escrow::FundMilestoneArgs { parent_order_id: o.id, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::InvalidMilestone);
    let now = env.now().await;
    let ix = tx(escrow::FundMilestoneArgs { expires_at: now - 1, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::FundTermsExpired);
    let ix = tx(escrow::FundMilestoneArgs { delivery_deadline: now, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::DeliveryDeadlineInPast);
    let ix = tx(escrow::FundMilestoneArgs { delivery_deadline: now + MAX_DELIVERY_WINDOW + 1, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::DeliveryDeadlineTooFar);
    let ix = tx(escrow::FundMilestoneArgs { amount: 0, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::AmountIsZero);
    let ix = tx(escrow::FundMilestoneArgs { review_window: MAX_REVIEW_WINDOW + 1, ..base }, &env);
    assert_escrow_err(env.send(vec![ix], &[&alice, &pat]).await, EscrowError::ReviewWindowTooLong);
    assert!(!env.exists(o.pda).await);
    // The last index is allowed.
    let ix = tx(escrow::FundMilestoneArgs { milestone_index: MAX_MILESTONES, ..base }, &env);
    env.send(vec![ix], &[&alice, &pat]).await.unwrap();
    assert_eq!(env.order(&o).await.unwrap().milestone_index, MAX_MILESTONES);
}

#[tokio::test]
async fn a_milestone_escrow_id_cannot_be_funded_twice() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let parent = env.funded_with_revisions(usdc, PRICE, 0).await;
    let o = env.milestone_ref(&parent, PRICE);
    env.fund_milestone(&o, parent.id, 2, 0).await.unwrap();
    assert_ix_err(env.fund_milestone(&o, parent.id, 2, 3).await, SYSTEM_ACCOUNT_ALREADY_IN_USE);
    // ... nor through `fund`, nor the first milestone again.
    let deadline = env.now().await + DAY;
    assert_ix_err(env.fund(&o, deadline, 0).await, SYSTEM_ACCOUNT_ALREADY_IN_USE);
    assert_ix_err(env.fund_milestone(&parent, parent.id, 1, 0).await, SYSTEM_ACCOUNT_ALREADY_IN_USE);
    assert_eq!(env.order(&o).await.unwrap().revisions_included, 0);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance(env.alice.pubkey(), usdc).await, ALICE_START - 2 * PRICE);
}

#[tokio::test]
async fn a_milestone_vault_created_before_funding_does_not_block_it() {
    // As for `fund` (issue 20 item 10): milestone ids are known before funding, so anyone can
    // create a milestone's vault first; funding accepts it and the surplus is swept at settlement.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, mallory) = (kp(&env.alice), kp(&env.mallory));
    let parent = env.funded_with_revisions(usdc, PRICE, 0).await;
    let o = env.milestone_ref(&parent, PRICE);
    let ix = anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account(
        &mallory.pubkey(),
        &o.pda,
        &usdc.mint,
        &usdc.token_program,
    );
    env.send(vec![ix], &[&mallory]).await.unwrap();
    env.fund_milestone(&o, parent.id, 2, 0).await.unwrap();
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    env.release(&o, &alice).await.unwrap();
    assert!(!env.exists(o.vault).await);
}

// ---------------------------------------------------------------- request_revision

#[tokio::test]
async fn a_revision_sends_the_work_back_stops_the_timer_and_gives_back_the_time_left() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, mallory) = (kp(&env.alice), kp(&env.bob), kp(&env.mallory));
    let o = env.funded_with_revisions(usdc, PRICE, 2).await;
    let deadline = env.order(&o).await.unwrap().delivery_deadline;
    env.warp_by(2 * DAY).await;
    env.deliver(&o, &bob).await.unwrap(); // 5 days early
    env.warp_by(DAY).await;
    let now = env.now().await;
    let logs = env.send_with_logs(vec![env.ix_request_revision(&o, alice.pubkey())], &[&alice]).await;
    let order = env.order(&o).await.unwrap();
    assert_eq!(order.state, OrderState::Funded);
    assert_eq!(order.delivered_at, 0);
    assert_eq!(order.revisions_used, 1);
    assert_eq!(order.delivery_deadline, now + 5 * DAY);
    assert!(order.delivery_deadline > deadline);
    let e: RevisionRequested = find_event(&logs).expect("RevisionRequested");
    assert_eq!((e.order, e.by, e.revisions_used, e.revisions_included, e.delivery_deadline), (o.pda, alice.pubkey(), 1, 2, now + 5 * DAY));
    // The auto-release timer stopped: past the old review window nobody can claim.
    env.warp_by(REVIEW_WINDOW + 1).await;
    assert_escrow_err(env.claim(&o, &mallory).await, EscrowError::OrderNotDelivered);
    // Nor can Alice refund alone: the deadline moved with her consent.
    assert_escrow_err(env.refund(&o, &alice).await, EscrowError::BuyerRefundNotAllowed);
    env.deliver(&o, &bob).await.unwrap();
    env.release(&o, &alice).await.unwrap();
    assert_eq!(env.balance(bob.pubkey(), usdc).await, split(PRICE, 0, FEE_BPS).unwrap().seller);
}

#[tokio::test]
async fn a_late_delivery_revised_gets_a_day() {
    let mut env = Env::new().await;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let o = env.funded_with_revisions(env.usdc, PRICE, 1).await;
    env.warp_by(8 * DAY).await; // a day past the deadline
    env.deliver(&o, &bob).await.unwrap();
    let now = env.now().await;
    env.request_revision(&o, &alice).await.unwrap();
    assert_eq!(env.order(&o).await.unwrap().delivery_deadline, now + MIN_REVISION_SECONDS);
}

#[tokio::test]
async fn only_the_buyer_or_the_platform_requests_a_revision() {
    let mut env = Env::new().await;
    let (bob, carol, mallory, pat) = (kp(&env.bob), kp(&env.carol), kp(&env.mallory), kp(&env.platform));
    let o = env.funded_with_revisions(env.usdc, PRICE, 1).await;
    env.deliver(&o, &bob).await.unwrap();
    for who in [&bob, &carol, &mallory] {
        assert_escrow_err(env.request_revision(&o, who).await, EscrowError::NotBuyerOrPlatform);
    }
    assert_eq!(env.order(&o).await.unwrap().state, OrderState::Delivered);
    env.request_revision(&o, &pat).await.unwrap();
    assert_eq!(env.order(&o).await.unwrap().revisions_used, 1);
}

#[tokio::test]
async fn revisions_stop_at_the_included_count_and_at_auto_release() {
    let mut env = Env::new().await;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let o = env.funded_with_revisions(env.usdc, PRICE, 2).await;
    // Not delivered yet.
    assert_escrow_err(env.request_revision(&o, &alice).await, EscrowError::OrderNotDelivered);
    for _ in 0..2 {
        env.deliver(&o, &bob).await.unwrap();
        env.request_revision(&o, &alice).await.unwrap();
    }
    env.deliver(&o, &bob).await.unwrap();
    assert_escrow_err(env.request_revision(&o, &alice).await, EscrowError::RevisionLimitReached);
    assert_eq!(env.order(&o).await.unwrap().revisions_used, 2);

    // None included (every order funded with `fund`).
    let plain = env.funded_order(env.usdc, PRICE).await;
    env.deliver(&plain, &bob).await.unwrap();
    assert_escrow_err(env.request_revision(&plain, &alice).await, EscrowError::RevisionLimitReached);

    // From auto-release on the seller's claim is not raced.
    let late = env.funded_with_revisions(env.usdc, PRICE, 1).await;
    env.deliver(&late, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW - 1).await;
    let ix = env.ix_request_revision(&late, alice.pubkey());
    let snapshot = env.order(&late).await.unwrap();
    env.warp_by(1).await;
    assert_escrow_err(env.send(vec![ix], &[&alice]).await, EscrowError::ReviewWindowElapsed);
    assert_eq!(env.order(&late).await.unwrap().revisions_used, snapshot.revisions_used);

    // Disputed: no revision.
    let disputed = env.funded_with_revisions(env.usdc, PRICE, 1).await;
    env.deliver(&disputed, &bob).await.unwrap();
    env.dispute(&disputed, &alice).await.unwrap();
    assert_escrow_err(env.request_revision(&disputed, &alice).await, EscrowError::OrderNotDelivered);
}

#[tokio::test]
async fn a_revision_just_before_auto_release_is_allowed() {
    let mut env = Env::new().await;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let o = env.funded_with_revisions(env.usdc, PRICE, 1).await;
    env.deliver(&o, &bob).await.unwrap();
    env.warp_by(REVIEW_WINDOW - 1).await;
    env.request_revision(&o, &alice).await.unwrap();
}

// ---------------------------------------------------------------- extend_deadline

#[tokio::test]
async fn an_accepted_extension_moves_the_buyer_s_refund_right() {
    let mut env = Env::new().await;
    let alice = kp(&env.alice);
    let o = env.funded_order(env.usdc, PRICE).await;
    let old = env.order(&o).await.unwrap().delivery_deadline;
    let new_deadline = old + 3 * DAY;
    let logs = env.send_with_logs(vec![env.ix_extend_deadline(&o, alice.pubkey(), new_deadline)], &[&alice]).await;
    let e: DeadlineExtended = find_event(&logs).expect("DeadlineExtended");
    assert_eq!((e.previous_deadline, e.delivery_deadline, e.by), (old, new_deadline, alice.pubkey()));
    assert_eq!(env.order(&o).await.unwrap().delivery_deadline, new_deadline);
    env.warp_to(old + 1).await;
    assert_escrow_err(env.refund(&o, &alice).await, EscrowError::BuyerRefundNotAllowed);
    env.warp_to(new_deadline + 1).await;
    env.refund(&o, &alice).await.unwrap();
    assert_eq!(env.balance(alice.pubkey(), env.usdc).await, ALICE_START);
}

#[tokio::test]
async fn only_the_buyer_or_the_platform_extends_a_deadline() {
    let mut env = Env::new().await;
    let (bob, carol, mallory, pat) = (kp(&env.bob), kp(&env.carol), kp(&env.mallory), kp(&env.platform));
    let o = env.funded_order(env.usdc, PRICE).await;
    let old = env.order(&o).await.unwrap().delivery_deadline;
    for who in [&bob, &carol, &mallory] {
        assert_escrow_err(env.extend_deadline(&o, who, old + DAY).await, EscrowError::NotBuyerOrPlatform);
    }
    assert_eq!(env.order(&o).await.unwrap().delivery_deadline, old);
    env.extend_deadline(&o, &pat, old + DAY).await.unwrap();
    assert_eq!(env.order(&o).await.unwrap().delivery_deadline, old + DAY);
}

#[tokio::test]
async fn an_extension_is_later_in_the_future_and_within_the_delivery_window() {
    let mut env = Env::new().await;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let o = env.funded_order(env.usdc, PRICE).await;
    let old = env.order(&o).await.unwrap().delivery_deadline;
    assert_escrow_err(env.extend_deadline(&o, &alice, old).await, EscrowError::DeadlineNotLater);
    assert_escrow_err(env.extend_deadline(&o, &alice, old - DAY).await, EscrowError::DeadlineNotLater);
    let now = env.now().await;
    assert_escrow_err(env.extend_deadline(&o, &alice, now + MAX_DELIVERY_WINDOW + 1).await, EscrowError::DeliveryDeadlineTooFar);
    env.extend_deadline(&o, &alice, now + MAX_DELIVERY_WINDOW).await.unwrap();
    // Once the deadline has passed, a later one that is still in the past moves nothing.
    let o2 = env.funded_order(env.usdc, PRICE).await;
    let old2 = env.order(&o2).await.unwrap().delivery_deadline;
    env.warp_to(old2 + 10).await;
    assert_escrow_err(env.extend_deadline(&o2, &alice, old2 + 5).await, EscrowError::DeliveryDeadlineInPast);
    assert_escrow_err(env.extend_deadline(&o2, &alice, old2 + 10).await, EscrowError::DeliveryDeadlineInPast);
    env.extend_deadline(&o2, &alice, old2 + 11).await.unwrap();

    // Funded only: not once delivered, not in a dispute.
    let d = env.funded_order(env.usdc, PRICE).await;
    env.deliver(&d, &bob).await.unwrap();
    let dd = env.order(&d).await.unwrap().delivery_deadline;
    assert_escrow_err(env.extend_deadline(&d, &alice, dd + DAY).await, EscrowError::OrderNotFunded);
    env.dispute(&d, &alice).await.unwrap();
    assert_escrow_err(env.extend_deadline(&d, &alice, dd + DAY).await, EscrowError::OrderNotFunded);
    let f = env.funded_order(env.usdc, PRICE).await;
    env.dispute(&f, &bob).await.unwrap();
    let fd = env.order(&f).await.unwrap().delivery_deadline;
    assert_escrow_err(env.extend_deadline(&f, &alice, fd + DAY).await, EscrowError::OrderNotFunded);
}

// ---------------------------------------------------------------- settlement by agreement

async fn proposal(env: &mut Env, o: &OrderRef) -> SettlementProposal {
    env.order(o).await.unwrap().settlement
}

#[tokio::test]
async fn bob_proposes_alice_accepts_and_the_program_pays_exactly_that_split() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let alice_lamports = env.lamports(alice.pubkey()).await;
    let o = env.funded_order(usdc, PRICE).await;
    let expires_at = env.now().await + 3 * DAY;
    let logs = env.send_with_logs(vec![env.ix_propose_settlement(&o, bob.pubkey(), 3_000, expires_at, PARTY_SELLER)], &[&bob]).await;
    let e: SettlementProposed = find_event(&logs).expect("SettlementProposed");
    assert_eq!((e.by, e.proposed_by, e.buyer_bps, e.expires_at), (bob.pubkey(), PARTY_SELLER, 3_000, expires_at));
    assert_eq!(proposal(&mut env, &o).await, SettlementProposal { proposed_by: PARTY_SELLER, buyer_bps: 3_000, expires_at });

    let ix = env.ix_accept_with(env.accept_accounts(&o, alice.pubkey()), 3_000);
    let logs = env.send_with_logs(vec![ix], &[&alice]).await;
    let p = split(PRICE, 3_000, FEE_BPS).unwrap();
    assert_eq!(p.buyer, PRICE * 3 / 10);
    assert_eq!(p.fee, (PRICE - p.buyer) * FEE_BPS as u64 / 10_000, "fee only on the seller's share");
    let e: SettlementAccepted = find_event(&logs).expect("SettlementAccepted");
    assert_eq!((e.buyer_amount, e.seller_amount, e.fee, e.buyer_bps, e.proposed_by, e.by), (p.buyer, p.seller, p.fee, 3_000, PARTY_SELLER, alice.pubkey()));
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START - PRICE + p.buyer);
    assert_eq!(env.balance(bob.pubkey(), usdc).await, p.seller);
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, p.fee);
    assert!(!env.exists(o.pda).await && !env.exists(o.vault).await);
    assert_eq!(env.lamports(alice.pubkey()).await, alice_lamports, "the rent went back to Alice");
}

#[tokio::test]
async fn a_cancel_by_agreement_in_a_dispute_pays_everything_back_without_fee() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob) = (kp(&env.alice), kp(&env.bob));
    let o = env.funded_order(usdc, PRICE).await;
    env.deliver(&o, &bob).await.unwrap();
    let expires_at = env.now().await + DAY;
    env.propose(&o, &alice, PARTY_BUYER, 10_000, expires_at).await.unwrap();
    // A dispute can still be opened while a proposal is pending, and the proposal survives it.
    env.dispute(&o, &alice).await.unwrap();
    assert_eq!(proposal(&mut env, &o).await.proposed_by, PARTY_BUYER);
    env.accept(&o, &bob, 10_000).await.unwrap();
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START);
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, 0);
}

#[tokio::test]
async fn only_a_party_or_the_platform_for_it_proposes() {
    let mut env = Env::new().await;
    let (alice, bob, carol, mallory, pat) = (kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.mallory), kp(&env.platform));
    let o = env.funded_order(env.usdc, PRICE).await;
    let at = env.now().await + DAY;
    assert_escrow_err(env.propose(&o, &bob, PARTY_BUYER, 0, at).await, EscrowError::NotProposingParty);
    assert_escrow_err(env.propose(&o, &alice, PARTY_SELLER, 0, at).await, EscrowError::NotProposingParty);
    for who in [&carol, &mallory] {
        assert_escrow_err(env.propose(&o, who, PARTY_BUYER, 0, at).await, EscrowError::NotProposingParty);
        assert_escrow_err(env.propose(&o, who, PARTY_SELLER, 0, at).await, EscrowError::NotProposingParty);
    }
    for party in [PARTY_NONE, 3, u8::MAX] {
        assert_escrow_err(env.propose(&o, &pat, party, 0, at).await, EscrowError::InvalidParty);
        assert_escrow_err(env.propose(&o, &alice, party, 0, at).await, EscrowError::InvalidParty);
    }
    assert_eq!(proposal(&mut env, &o).await, SettlementProposal::default());
    env.propose(&o, &pat, PARTY_SELLER, 2_500, at).await.unwrap();
    assert_eq!(proposal(&mut env, &o).await.proposed_by, PARTY_SELLER);
    // A later proposal replaces the earlier one, whoever made it.
    env.propose(&o, &alice, PARTY_BUYER, 5_000, at).await.unwrap();
    assert_eq!(proposal(&mut env, &o).await, SettlementProposal { proposed_by: PARTY_BUYER, buyer_bps: 5_000, expires_at: at });
}

#[tokio::test]
async fn a_proposal_is_bounded_in_share_and_lifetime() {
    let mut env = Env::new().await;
    let alice = kp(&env.alice);
    let o = env.funded_order(env.usdc, PRICE).await;
    let now = env.now().await;
    assert_escrow_err(env.propose(&o, &alice, PARTY_BUYER, 10_001, now + DAY).await, EscrowError::BuyerBpsTooHigh);
    assert_escrow_err(env.propose(&o, &alice, PARTY_BUYER, u16::MAX, now + DAY).await, EscrowError::BuyerBpsTooHigh);
    assert_escrow_err(env.propose(&o, &alice, PARTY_BUYER, 0, now).await, EscrowError::SettlementExpiresInPast);
    assert_escrow_err(env.propose(&o, &alice, PARTY_BUYER, 0, now - 1).await, EscrowError::SettlementExpiresInPast);
    assert_escrow_err(env.propose(&o, &alice, PARTY_BUYER, 0, now + MAX_PROPOSAL_LIFETIME + 1).await, EscrowError::SettlementLifetimeTooLong);
    assert_eq!(MAX_PROPOSAL_LIFETIME, 7 * DAY);
    env.propose(&o, &alice, PARTY_BUYER, 10_000, now + MAX_PROPOSAL_LIFETIME).await.unwrap();
}

#[tokio::test]
async fn a_proposal_is_accepted_only_by_the_other_party_with_its_terms_before_it_expires() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (alice, bob, carol, mallory, pat) = (kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.mallory), kp(&env.platform));
    let o = env.funded_order(usdc, PRICE).await;
    assert_escrow_err(env.accept(&o, &alice, 0).await, EscrowError::NoSettlementProposal);
    let expires_at = env.now().await + DAY;
    env.propose(&o, &alice, PARTY_BUYER, 4_000, expires_at).await.unwrap();
    assert_escrow_err(env.accept(&o, &alice, 4_000).await, EscrowError::OwnSettlementProposal);
    for who in [&carol, &mallory] {
        assert_escrow_err(env.accept(&o, who, 4_000).await, EscrowError::NotOrderParty);
    }
    assert_escrow_err(env.accept(&o, &bob, 3_999).await, EscrowError::SettlementTermsMismatch);
    assert_escrow_err(env.accept(&o, &bob, 0).await, EscrowError::SettlementTermsMismatch);
    env.warp_to(expires_at).await;
    assert_escrow_err(env.accept(&o, &bob, 4_000).await, EscrowError::SettlementProposalExpired);
    assert_eq!(env.balance_of(o.vault).await, PRICE);

    // The seller's own proposal: Bob cannot accept it, the platform can (for Alice).
    let expires_at = env.now().await + DAY;
    env.propose(&o, &bob, PARTY_SELLER, 1_000, expires_at).await.unwrap();
    assert_escrow_err(env.accept(&o, &bob, 1_000).await, EscrowError::OwnSettlementProposal);
    env.warp_to(expires_at - 1).await;
    env.accept(&o, &pat, 1_000).await.unwrap();
    let p = split(PRICE, 1_000, FEE_BPS).unwrap();
    assert_eq!(env.balance(bob.pubkey(), usdc).await, p.seller);
}

#[tokio::test]
async fn accept_settlement_refuses_swapped_accounts() {
    let mut env = Env::new().await;
    let (usdc, t22) = (env.usdc, env.t22);
    let bob = kp(&env.bob);
    let alice = kp(&env.alice);
    let o = env.funded_order(usdc, PRICE).await;
    let other = env.funded_order(usdc, PRICE).await;
    let at = env.now().await + DAY;
    env.propose(&o, &alice, PARTY_BUYER, 5_000, at).await.unwrap();
    env.propose(&other, &alice, PARTY_BUYER, 5_000, at).await.unwrap();
    let mallory = env.mallory.pubkey();
    let try_with = |f: &dyn Fn(&mut escrow::accounts::AcceptSettlement), env: &Env| {
        let mut a = env.accept_accounts(&o, bob.pubkey());
        f(&mut a);
        env.ix_accept_with(a, 5_000)
    };
    let ix = try_with(&|a| a.vault = other.vault, &env); // another order's vault
    assert_anchor_err(env.send(vec![ix], &[&bob]).await, Anchor::ConstraintTokenOwner);
    let ix = try_with(&|a| a.order = other.pda, &env); // another order with this order's vault
    assert_anchor_err(env.send(vec![ix], &[&bob]).await, Anchor::ConstraintTokenOwner);
    let ix = try_with(&|a| {
        a.mint = t22.mint; // another mint
        a.token_program = t22.token_program;
    }, &env);
    assert_anchor_err(env.send(vec![ix], &[&bob]).await, Anchor::ConstraintHasOne);
    let m_ata = env.ata(mallory, usdc);
    let ix = try_with(&|a| a.seller_token_account = m_ata, &env);
    assert_escrow_err(env.send(vec![ix], &[&bob]).await, EscrowError::SellerTokenAccountMismatch);
    let ix = try_with(&|a| a.buyer_token_account = m_ata, &env);
    assert_escrow_err(env.send(vec![ix], &[&bob]).await, EscrowError::BuyerTokenAccountMismatch);
    let ix = try_with(&|a| a.treasury_token_account = m_ata, &env);
    assert_anchor_err(env.send(vec![ix], &[&bob]).await, Anchor::ConstraintTokenOwner);
    let ix = try_with(&|a| a.rent_payer = mallory, &env);
    assert_escrow_err(env.send(vec![ix], &[&bob]).await, EscrowError::RentReceiverMismatch);
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance_of(other.vault).await, PRICE);
    assert_eq!(env.balance(mallory, usdc).await, 0);
    env.accept(&o, &bob, 5_000).await.unwrap();
    assert_eq!(env.balance_of(other.vault).await, PRICE);
}

#[tokio::test]
async fn only_the_proposer_or_the_platform_withdraws() {
    let mut env = Env::new().await;
    let (alice, bob, carol, mallory, pat) = (kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.mallory), kp(&env.platform));
    let o = env.funded_order(env.usdc, PRICE).await;
    assert_escrow_err(env.withdraw(&o, &alice).await, EscrowError::NoSettlementProposal);
    let at = env.now().await + DAY;
    env.propose(&o, &bob, PARTY_SELLER, 2_000, at).await.unwrap();
    for who in [&alice, &carol, &mallory] {
        assert_escrow_err(env.withdraw(&o, who).await, EscrowError::NotProposingParty);
    }
    let logs = env.send_with_logs(vec![env.ix_withdraw_settlement(&o, bob.pubkey())], &[&bob]).await;
    let e: SettlementWithdrawn = find_event(&logs).expect("SettlementWithdrawn");
    assert_eq!((e.by, e.proposed_by), (bob.pubkey(), PARTY_SELLER));
    assert_eq!(proposal(&mut env, &o).await, SettlementProposal::default());
    // Withdrawn, it can no longer be accepted.
    assert_escrow_err(env.accept(&o, &alice, 2_000).await, EscrowError::NoSettlementProposal);
    env.propose(&o, &alice, PARTY_BUYER, 2_000, at).await.unwrap();
    env.withdraw(&o, &pat).await.unwrap();
    assert_eq!(proposal(&mut env, &o).await, SettlementProposal::default());
    assert_eq!(env.balance_of(o.vault).await, PRICE);
}
