//! Issue 20 item 12: an in-place upgrade over accounts the previous version wrote. The config and
//! the open orders are rewritten byte by byte in the previous release's layouts (see
//! `common::downgrade_*`), exactly what the current code finds after `solana program deploy`
//! replaced the program in place; the upgrade authority migrates them and every order settles.

#![allow(deprecated)]

mod common;

use anchor_lang::error::ErrorCode as Anchor;
use common::*;
use escrow::errors::EscrowError;
use escrow::state::{OrderState, CONFIG_VERSION, ORDER_VERSION};
use escrow::{MigrateConfigArgs, UpdateConfigArgs};
use solana_sdk::{signature::Keypair, signer::Signer};

const PRICE: u64 = 40_000_000;
const FEE: u64 = PRICE * FEE_BPS as u64 / 10_000;

fn windows() -> MigrateConfigArgs {
    MigrateConfigArgs { max_review_window: Some(MAX_REVIEW_WINDOW), max_delivery_window: Some(MAX_DELIVERY_WINDOW) }
}

#[tokio::test]
async fn open_orders_of_the_previous_layout_settle_after_an_upgrade_in_place() {
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (admin, alice, bob, carol, pat, mallory) =
        (kp(&env.admin), kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.platform), kp(&env.mallory));
    let alice_lamports = env.lamports(alice.pubkey()).await;

    // Four open orders, one per open state plus one to fund later, then the previous layouts.
    let funded = env.funded_order(usdc, PRICE).await;
    let delivered = env.funded_order(usdc, PRICE).await;
    env.deliver(&delivered, &bob).await.unwrap();
    let disputed = env.funded_order(usdc, PRICE).await;
    env.dispute(&disputed, &alice).await.unwrap();
    let config_before = env.config().await;
    let orders_before = [env.order(&funded).await.unwrap(), env.order(&delivered).await.unwrap(), env.order(&disputed).await.unwrap()];
    env.downgrade_config_to_v0().await;

    // An old config that happens to deserialize through the new layout (fewer than 8 mints: zero
    // padding reads as version 0 and no windows) is refused by every instruction that reads it.
    assert_escrow_err(env.deliver(&funded, &bob).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.dispute(&funded, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.release(&delivered, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.claim(&delivered, &mallory).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.resolve(&disputed, &carol, 5_000).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.refund(&funded, &pat).await, EscrowError::AccountNotMigrated);
    // ... and the instructions of issue 24.
    let at = env.now().await + DAY;
    assert_escrow_err(env.request_revision(&delivered, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.extend_deadline(&funded, &alice, at + 30 * DAY).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.propose(&funded, &alice, escrow::state::PARTY_BUYER, 0, at).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.withdraw(&funded, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.accept(&funded, &bob, 0).await, EscrowError::AccountNotMigrated);
    let milestone = env.order_ref(usdc, PRICE);
    assert_escrow_err(env.fund_milestone(&milestone, milestone.id, 1, 0).await, EscrowError::AccountNotMigrated);

    for o in [&funded, &delivered, &disputed] {
        env.downgrade_order_to_v0(o).await;
    }

    // What the previous version's accounts do to the new code before migration: nothing acts on
    // them. An order of 236 bytes does not even deserialize (the pre-versioning symptom, for the
    // config too); a config of the old layout that happens to deserialize is refused by version.
    assert_anchor_err(env.refund(&funded, &pat).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.release(&delivered, &alice).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.deliver(&funded, &bob).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.dispute(&delivered, &alice).await, Anchor::AccountDidNotDeserialize);
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { fee_bps: Some(100), ..Default::default() });
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::AccountNotMigrated);
    let fresh = env.order_ref(usdc, PRICE);
    let deadline = env.now().await + DAY;
    assert_escrow_err(env.fund(&fresh, deadline, 0).await, EscrowError::AccountNotMigrated);

    // Only the upgrade authority migrates (not the admin role alone, not the platform, not Mallory).
    for who in [&pat, &mallory] {
        let ix = env.ix_migrate_config(who.pubkey(), windows());
        assert_escrow_err(env.send(vec![ix], &[who]).await, EscrowError::NotUpgradeAuthority);
        let ix = env.ix_migrate_order(who.pubkey(), funded.pda);
        assert_escrow_err(env.send(vec![ix], &[who]).await, EscrowError::NotUpgradeAuthority);
    }
    // The first release's config has no windows: the authority must give them.
    let ix = env.ix_migrate_config(admin.pubkey(), MigrateConfigArgs::default());
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::MigrationValueMissing);
    let ix = env.ix_migrate_config(
        admin.pubkey(),
        MigrateConfigArgs { max_review_window: Some(REVIEW_WINDOW - 1), max_delivery_window: Some(MAX_DELIVERY_WINDOW) },
    );
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::MaxReviewWindowOutOfRange);

    let ix = env.ix_migrate_config(admin.pubkey(), windows());
    env.send(vec![ix], &[&admin]).await.unwrap();
    let config = env.config().await;
    assert_eq!(config.version, CONFIG_VERSION);
    assert_eq!(config.admin, config_before.admin);
    assert_eq!(config.platform_authority, config_before.platform_authority);
    assert_eq!(config.arbiter, config_before.arbiter);
    assert_eq!(config.treasury, config_before.treasury);
    assert_eq!(config.fee_bps, config_before.fee_bps);
    assert_eq!(config.default_review_window, config_before.default_review_window);
    assert_eq!(config.allowed_mints, config_before.allowed_mints);
    assert_eq!(config.bump, config_before.bump);
    assert_eq!((config.max_review_window, config.max_delivery_window), (MAX_REVIEW_WINDOW, MAX_DELIVERY_WINDOW));
    let size = env.ctx.banks_client.get_account(env.config).await.unwrap().unwrap().data.len();
    assert_eq!(size, escrow::state::Config::LEN);
    let ix = env.ix_migrate_config(admin.pubkey(), windows());
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::AccountAlreadyCurrent);

    // The config is current, the orders are not yet: still refused, by version or by size.
    assert_anchor_err(env.refund(&funded, &pat).await, Anchor::AccountDidNotDeserialize);
    let ix = env.ix_migrate_order(admin.pubkey(), env.config);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::UnknownAccountLayout);
    let ix = env.ix_migrate_order(admin.pubkey(), funded.vault);
    assert_anchor_err(env.send(vec![ix], &[&admin]).await, Anchor::ConstraintOwner);

    for (o, before) in [&funded, &delivered, &disputed].into_iter().zip(orders_before) {
        let ix = env.ix_migrate_order(admin.pubkey(), o.pda);
        env.send(vec![ix], &[&admin]).await.unwrap();
        let after = env.order(o).await.unwrap();
        assert_eq!(after.version, ORDER_VERSION);
        let rent = env.ctx.banks_client.get_rent().await.unwrap().minimum_balance(escrow::state::Order::LEN);
        assert_eq!(env.lamports(o.pda).await, rent, "topped up to rent exemption at the new size");
        assert_eq!(after.state, before.state);
        assert_eq!(
            (after.order_id, after.buyer, after.seller, after.mint, after.amount, after.fee_bps, after.treasury),
            (before.order_id, before.buyer, before.seller, before.mint, before.amount, before.fee_bps, before.treasury)
        );
        assert_eq!(
            (after.funded_at, after.delivery_deadline, after.delivered_at, after.disputed_at, after.review_window),
            (before.funded_at, before.delivery_deadline, before.delivered_at, before.disputed_at, before.review_window)
        );
        assert_eq!((after.rent_payer, after.bump), (before.rent_payer, before.bump));
        let ix = env.ix_migrate_order(admin.pubkey(), o.pda);
        assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::AccountAlreadyCurrent);
    }
    assert_eq!(env.order(&delivered).await.unwrap().state, OrderState::Delivered);

    // Every order settles, a new one funds, the config updates.
    env.refund(&funded, &pat).await.unwrap();
    env.release(&delivered, &alice).await.unwrap();
    env.resolve(&disputed, &carol, 5_000).await.unwrap();
    for o in [&funded, &delivered, &disputed] {
        assert!(!env.exists(o.pda).await);
        assert!(!env.exists(o.vault).await);
    }
    let half = PRICE / 2;
    let half_fee = half * FEE_BPS as u64 / 10_000;
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START - 3 * PRICE + PRICE + half);
    assert_eq!(env.balance(bob.pubkey(), usdc).await, (PRICE - FEE) + (half - half_fee));
    assert_eq!(env.balance(env.trent.pubkey(), usdc).await, FEE + half_fee);
    // The old accounts held the rent of 236 bytes (`write_program_account`), the authority paid
    // the version byte's: Alice gets back exactly what her funding paid for 237-byte orders.
    assert_eq!(env.lamports(alice.pubkey()).await, alice_lamports);
    env.fund(&fresh, deadline, 0).await.unwrap();
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { fee_bps: Some(100), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    assert_eq!(env.config().await.fee_bps, 100);
}

#[tokio::test]
async fn a_config_with_all_eight_mints_or_the_unreleased_layout_migrates_too() {
    // Eight mints fill the old vec: no zero padding is left, the old bytes do not deserialize at
    // all (AccountDidNotDeserialize, not AccountNotMigrated).
    let mut env = Env::new().await;
    let (admin, alice) = (kp(&env.admin), kp(&env.alice));
    let mut mints = env.config().await.allowed_mints;
    while mints.len() < 8 {
        mints.push(Keypair::new().pubkey());
    }
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { allowed_mints: Some(mints.clone()), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    let o = env.funded_order(env.usdc, PRICE).await;
    env.downgrade_config_to_v0().await;
    assert_anchor_err(env.release(&o, &alice).await, Anchor::AccountDidNotDeserialize);
    let ix = env.ix_migrate_config(admin.pubkey(), windows());
    env.send(vec![ix], &[&admin]).await.unwrap();
    assert_eq!(env.config().await.allowed_mints, mints);
    env.release(&o, &alice).await.unwrap();

    // The layout main had between issue 8 and the versioning (windows in the middle): the
    // migration keeps its windows unless told otherwise.
    let ix = env.ix_update_config(&admin.pubkey(), UpdateConfigArgs { max_review_window: Some(20 * DAY), ..Default::default() });
    env.send(vec![ix], &[&admin]).await.unwrap();
    env.downgrade_config_to_unversioned_windows().await;
    let o = env.order_ref(env.usdc, PRICE);
    let deadline = env.now().await + DAY;
    assert_anchor_err(env.fund(&o, deadline, 0).await, Anchor::AccountDidNotDeserialize);
    let ix = env.ix_migrate_config(admin.pubkey(), MigrateConfigArgs { max_review_window: None, max_delivery_window: Some(60 * DAY) });
    env.send(vec![ix], &[&admin]).await.unwrap();
    let c = env.config().await;
    assert_eq!((c.version, c.max_review_window, c.max_delivery_window, c.allowed_mints.clone()), (CONFIG_VERSION, 20 * DAY, 60 * DAY, mints));
    env.fund(&o, deadline, 0).await.unwrap();
}

#[tokio::test]
async fn a_forged_old_order_is_not_migrated() {
    // An account of the program with an order's discriminator and old size, but whose address is
    // not the PDA of the order id it carries: Mallory cannot have one made current (she cannot
    // write program accounts anyway; this pins the address check).
    let mut env = Env::new().await;
    let admin = kp(&env.admin);
    let a = env.funded_order(env.usdc, PRICE).await;
    let b = env.funded_order(env.usdc, PRICE).await;
    let old_a = env.downgrade_order_to_v0(&a).await;
    env.write_program_account(b.pda, old_a.clone()).await;
    let ix = env.ix_migrate_order(admin.pubkey(), b.pda);
    assert_anchor_err(env.send(vec![ix], &[&admin]).await, Anchor::ConstraintSeeds);
    let mut truncated = old_a.clone();
    truncated.truncate(200);
    env.write_program_account(a.pda, truncated).await;
    let ix = env.ix_migrate_order(admin.pubkey(), a.pda);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::UnknownAccountLayout);
}

#[tokio::test]
async fn an_order_of_the_current_size_with_another_version_is_refused_everywhere() {
    // Not something the program writes: it pins the version check of every order instruction for
    // the day a later version keeps the size (or a migration is interrupted), so none of them ever
    // reads a layout it does not know.
    let mut env = Env::new().await;
    let (admin, alice, bob, carol, pat) = (kp(&env.admin), kp(&env.alice), kp(&env.bob), kp(&env.carol), kp(&env.platform));
    let o = env.funded_order(env.usdc, PRICE).await;
    let mut data = env.ctx.banks_client.get_account(o.pda).await.unwrap().unwrap().data;
    // The version byte sits right after the first release's fields (offset 236), whatever follows.
    data[236] = ORDER_VERSION + 1;
    env.write_program_account(o.pda, data).await;
    assert_escrow_err(env.deliver(&o, &bob).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.dispute(&o, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.release(&o, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.claim(&o, &bob).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.resolve(&o, &carol, 0).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.refund(&o, &pat).await, EscrowError::AccountNotMigrated);
    let at = env.now().await + DAY;
    assert_escrow_err(env.request_revision(&o, &alice).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.extend_deadline(&o, &alice, at + 30 * DAY).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.propose(&o, &alice, escrow::state::PARTY_BUYER, 0, at).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.withdraw(&o, &pat).await, EscrowError::AccountNotMigrated);
    assert_escrow_err(env.accept(&o, &pat, 0).await, EscrowError::AccountNotMigrated);
    let ix = env.ix_migrate_order(admin.pubkey(), o.pda);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::UnknownAccountLayout);
}

#[tokio::test]
async fn orders_funded_before_milestones_settle_after_the_upgrade_to_version_2() {
    // Issue 24: `fund` of the program before milestones wrote version 1 (237 bytes). After the
    // upgrade those orders are refused until the upgrade authority migrates them; they then read as
    // milestone 1 of a one-milestone order with no revision, and settle every way, settlement by
    // agreement included.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let (admin, alice, bob, pat, mallory) = (kp(&env.admin), kp(&env.alice), kp(&env.bob), kp(&env.platform), kp(&env.mallory));
    let alice_lamports = env.lamports(alice.pubkey()).await;
    let funded = env.funded_order(usdc, PRICE).await;
    let delivered = env.funded_order(usdc, PRICE).await;
    env.deliver(&delivered, &bob).await.unwrap();
    let disputed = env.funded_order(usdc, PRICE).await;
    env.dispute(&disputed, &alice).await.unwrap();
    let before = [env.order(&funded).await.unwrap(), env.order(&delivered).await.unwrap(), env.order(&disputed).await.unwrap()];
    for o in [&funded, &delivered, &disputed] {
        let old = env.downgrade_order_to_v1(o).await;
        assert_eq!((old.len(), old[236]), (237, 1));
    }

    // Nothing acts on a version-1 order: it does not deserialize as version 2.
    let at = env.now().await + DAY;
    assert_anchor_err(env.release(&delivered, &alice).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.refund(&funded, &pat).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.request_revision(&delivered, &alice).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.propose(&funded, &alice, escrow::state::PARTY_BUYER, 0, at).await, Anchor::AccountDidNotDeserialize);
    assert_anchor_err(env.extend_deadline(&funded, &alice, at + 30 * DAY).await, Anchor::AccountDidNotDeserialize);

    for who in [&pat, &mallory] {
        let ix = env.ix_migrate_order(who.pubkey(), funded.pda);
        assert_escrow_err(env.send(vec![ix], &[who]).await, EscrowError::NotUpgradeAuthority);
    }
    let rent = env.ctx.banks_client.get_rent().await.unwrap().minimum_balance(escrow::state::Order::LEN);
    for (o, b) in [&funded, &delivered, &disputed].into_iter().zip(before) {
        let ix = env.ix_migrate_order(admin.pubkey(), o.pda);
        let logs = env.send_with_logs(vec![ix], &[&admin]).await;
        let e: escrow::events::AccountMigrated = find_event(&logs).expect("AccountMigrated");
        assert_eq!((e.account, e.from_version, e.to_version), (o.pda, 1, ORDER_VERSION));
        let after = env.order(o).await.unwrap();
        assert_eq!(ORDER_VERSION, 2);
        assert_eq!(after.version, ORDER_VERSION);
        assert_eq!(env.lamports(o.pda).await, rent, "the upgrade authority topped it up to rent exemption at 267 bytes");
        assert_eq!(
            (after.order_id, after.buyer, after.seller, after.amount, after.state, after.delivery_deadline, after.delivered_at, after.disputed_at, after.rent_payer),
            (b.order_id, b.buyer, b.seller, b.amount, b.state, b.delivery_deadline, b.delivered_at, b.disputed_at, b.rent_payer)
        );
        assert_eq!((after.parent_order_id, after.milestone_index, after.revisions_included, after.revisions_used), (b.order_id, 1, 0, 0));
        assert_eq!(after.settlement, escrow::state::SettlementProposal::default());
        let ix = env.ix_migrate_order(admin.pubkey(), o.pda);
        assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::AccountAlreadyCurrent);
    }

    // No revision was included before milestones.
    assert_escrow_err(env.request_revision(&delivered, &alice).await, EscrowError::RevisionLimitReached);
    env.release(&delivered, &alice).await.unwrap();
    env.propose(&disputed, &bob, escrow::state::PARTY_SELLER, 5_000, at).await.unwrap();
    env.accept(&disputed, &alice, 5_000).await.unwrap();
    let deadline = env.order(&funded).await.unwrap().delivery_deadline;
    env.extend_deadline(&funded, &alice, deadline + DAY).await.unwrap();
    env.refund(&funded, &pat).await.unwrap();
    let half = PRICE / 2;
    let half_fee = half * FEE_BPS as u64 / 10_000;
    assert_eq!(env.balance(alice.pubkey(), usdc).await, ALICE_START - 3 * PRICE + PRICE + half);
    assert_eq!(env.balance(bob.pubkey(), usdc).await, (PRICE - FEE) + (half - half_fee));
    // The old accounts held the rent of 237 bytes, the authority paid the 30 added bytes' rent:
    // Alice gets back exactly what her funding paid.
    assert_eq!(env.lamports(alice.pubkey()).await, alice_lamports);
}

#[tokio::test]
async fn a_237_byte_order_whose_version_byte_is_not_1_is_not_migrated() {
    let mut env = Env::new().await;
    let admin = kp(&env.admin);
    let o = env.funded_order(env.usdc, PRICE).await;
    let mut data = env.downgrade_order_to_v1(&o).await;
    data[236] = 7;
    env.write_program_account(o.pda, data).await;
    let ix = env.ix_migrate_order(admin.pubkey(), o.pda);
    assert_escrow_err(env.send(vec![ix], &[&admin]).await, EscrowError::UnknownAccountLayout);
}
