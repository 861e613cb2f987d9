//! Issue 26 item 5: fee sponsorship. A sponsor ("Sam", the service's fee-payer key) pays the
//! transaction fee and the rent of the order account and the vault of `fund_milestone` for a
//! buyer who holds USDC and 0 SOL ("Zoe"); `order.rent_payer` records Sam, and every closing
//! instruction returns the rent to Sam, never to the buyer or the closer.
//!
//! Cast as in `common`: Bob sells, Carol arbitrates, Pat is the platform, Trent's wallet owns the
//! treasury, Mallory is an outsider.
#![allow(deprecated)]

mod common;

use anchor_lang::error::ErrorCode as Anchor;
use common::*;
use escrow::errors::EscrowError;
use escrow::state::PARTY_SELLER;
use solana_sdk::{
    compute_budget::ComputeBudgetInstruction, message::Message, signature::Keypair, signer::Signer,
    system_instruction, transaction::Transaction,
};

const PRICE: u64 = 40_000_000;
const SPONSOR_START: u64 = 1_000_000_000; // 1 SOL

struct Sponsored {
    sam: Keypair,
    zoe: Keypair,
}

/// Sam holds 1 SOL; Zoe holds 1000 USDC in her token account and no lamports at all.
async fn cast(env: &mut Env) -> Sponsored {
    let (sam, zoe) = (Keypair::new(), Keypair::new());
    let usdc = env.usdc;
    let payer = env.ctx.payer.pubkey();
    env.send(vec![system_instruction::transfer(&payer, &sam.pubkey(), SPONSOR_START)], &[]).await.unwrap();
    env.create_ata(zoe.pubkey(), usdc).await;
    env.mint_to(usdc, zoe.pubkey(), ALICE_START).await;
    assert_eq!(env.lamports(zoe.pubkey()).await, 0);
    Sponsored { sam, zoe }
}

/// Zoe's order for Bob, rent paid by Sam.
fn sponsored_ref(env: &mut Env, s: &Sponsored) -> OrderRef {
    let usdc = env.usdc;
    let mut o = env.order_ref(usdc, PRICE);
    o.buyer = s.zoe.pubkey();
    o.rent_payer = s.sam.pubkey();
    o
}

/// Funds `o` the way the service's sponsored transaction does: Sam is the fee payer and the rent
/// payer, Pat co-signs, Zoe signs as token authority. Returns the fee Sam paid (lamports).
async fn fund_sponsored(env: &mut Env, s: &Sponsored, o: &OrderRef) -> u64 {
    let args = env.milestone_args(o, o.id, 1, 0).await;
    let ixs = vec![ComputeBudgetInstruction::set_compute_unit_limit(400_000), env.ix_fund_milestone(o, args)];
    let pat = kp(&env.platform);
    let blockhash = env.ctx.banks_client.get_latest_blockhash().await.unwrap();
    let message = Message::new_with_blockhash(&ixs, Some(&s.sam.pubkey()), &blockhash);
    let fee = env.ctx.banks_client.get_fee_for_message(message.clone()).await.unwrap().unwrap();
    let tx = Transaction::new(&[&s.sam, &s.zoe, &pat], message, blockhash);
    env.ctx.banks_client.process_transaction(tx).await.unwrap();
    fee
}

#[tokio::test]
async fn a_buyer_with_0_sol_funds_and_the_sponsor_is_recorded_as_rent_payer() {
    let mut env = Env::new().await;
    let s = cast(&mut env).await;
    let o = sponsored_ref(&mut env, &s);
    let fee = fund_sponsored(&mut env, &s, &o).await;
    let order = env.order(&o).await.expect("order exists");
    assert_eq!((order.buyer, order.rent_payer), (s.zoe.pubkey(), s.sam.pubkey()));
    assert_eq!(env.balance_of(o.vault).await, PRICE);
    assert_eq!(env.balance(s.zoe.pubkey(), o.mint).await, ALICE_START - PRICE);
    let rent = env.lamports(o.pda).await + env.lamports(o.vault).await;
    assert!(rent > 0 && fee > 0);
    assert_eq!(env.lamports(s.sam.pubkey()).await, SPONSOR_START - fee - rent, "Sam paid the fee and the rent");
    assert_eq!(env.lamports(s.zoe.pubkey()).await, 0, "Zoe paid nothing in SOL");
}

#[tokio::test]
async fn every_closing_path_returns_the_sponsor_s_rent_and_leaves_the_buyer_s_lamports_alone() {
    let mut env = Env::new().await;
    let s = cast(&mut env).await;
    let (bob, carol, mallory) = (kp(&env.bob), kp(&env.carol), kp(&env.mallory));
    let zoe = kp(&s.zoe);
    let mut fees = 0;
    let mut orders = Vec::new();
    for how in ["release", "refund", "resolve", "accept", "claim"] {
        let o = sponsored_ref(&mut env, &s);
        fees += fund_sponsored(&mut env, &s, &o).await;
        orders.push((how, o));
    }
    let (_, claimed) = orders[4];
    env.deliver(&claimed, &bob).await.unwrap();
    let (_, resolved) = orders[2];
    env.dispute(&resolved, &zoe).await.unwrap();
    let (_, accepted) = orders[3];
    let expires_at = env.now().await + REVIEW_WINDOW + DAY; // still open after the warp below
    env.propose(&accepted, &bob, PARTY_SELLER, 4_000, expires_at).await.unwrap();
    env.warp_by(REVIEW_WINDOW).await;

    for (how, o) in &orders {
        let rent = env.lamports(o.pda).await + env.lamports(o.vault).await;
        let (sam_before, mallory_before) = (env.lamports(s.sam.pubkey()).await, env.lamports(mallory.pubkey()).await);
        let result = match *how {
            "release" => env.release(o, &zoe).await,
            "refund" => env.refund(o, &bob).await,
            "resolve" => env.resolve(o, &carol, 5_000).await,
            "accept" => env.accept(o, &zoe, 4_000).await,
            _ => env.claim(o, &mallory).await,
        };
        result.unwrap_or_else(|e| panic!("{how}: {e:?}"));
        assert!(!env.exists(o.pda).await && !env.exists(o.vault).await, "{how}: closed");
        assert_eq!(env.lamports(s.sam.pubkey()).await, sam_before + rent, "{how}: the rent went back to Sam");
        assert_eq!(env.lamports(s.zoe.pubkey()).await, 0, "{how}: Zoe's lamports unchanged");
        assert_eq!(env.lamports(mallory.pubkey()).await, mallory_before, "{how}: the cranker took no rent");
    }
    assert_eq!(env.lamports(s.sam.pubkey()).await, SPONSOR_START - fees, "Sam is out the fees only");
}

#[tokio::test]
async fn the_rent_payer_must_sign_and_the_rent_cannot_be_redirected_on_close() {
    let mut env = Env::new().await;
    let s = cast(&mut env).await;
    let (pat, mallory) = (kp(&env.platform), kp(&env.mallory));
    let zoe = kp(&s.zoe);
    let o = sponsored_ref(&mut env, &s);
    // Naming Sam as rent payer without his signature: refused (nobody spends a sponsor's lamports
    // without the sponsor's key).
    let args = env.milestone_args(&o, o.id, 1, 0).await;
    let ix = env.ix_fund_milestone(&o, args);
    let mut unsigned = ix.clone();
    for meta in unsigned.accounts.iter_mut().filter(|m| m.pubkey == s.sam.pubkey()) {
        meta.is_signer = false;
    }
    assert_anchor_err(env.send(vec![unsigned], &[&zoe, &pat]).await, Anchor::AccountNotSigner);
    assert!(!env.exists(o.pda).await);

    fund_sponsored(&mut env, &s, &o).await;
    // The buyer (or anyone) naming herself as rent receiver on close is refused.
    for thief in [zoe.pubkey(), mallory.pubkey()] {
        let mut a = env.release_accounts(&o, zoe.pubkey());
        a.rent_payer = thief;
        assert_escrow_err(env.send(vec![env.ix_release_with(a)], &[&zoe]).await, EscrowError::RentReceiverMismatch);
    }
    env.release(&o, &zoe).await.unwrap();
    assert!(!env.exists(o.pda).await);
}

#[tokio::test]
async fn unsponsored_the_buyer_passes_her_own_key_twice_and_gets_her_rent_back() {
    // rent_payer == buyer: the same key twice in one instruction. Anchor 0.32 has no duplicate
    // mutable account check, and the message merges both metas into one writable signer.
    let mut env = Env::new().await;
    let usdc = env.usdc;
    let alice = kp(&env.alice);
    let o = env.order_ref(usdc, PRICE);
    assert_eq!(o.rent_payer, o.buyer);
    let before = env.lamports(alice.pubkey()).await;
    env.fund_milestone(&o, o.id, 1, 0).await.unwrap();
    let rent = env.lamports(o.pda).await + env.lamports(o.vault).await;
    assert_eq!(env.order(&o).await.unwrap().rent_payer, alice.pubkey());
    assert_eq!(env.lamports(alice.pubkey()).await, before - rent, "Alice paid the rent (the harness pays fees)");
    env.release(&o, &alice).await.unwrap();
    assert_eq!(env.lamports(alice.pubkey()).await, before);
}
