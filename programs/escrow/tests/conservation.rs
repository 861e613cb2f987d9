//! Random lifecycles against the real runtime: a model predicts which actions succeed, and after
//! every step the tokens held by Alice, Bob, the treasury, Mallory and the vaults add up to what
//! Alice started with. Every terminal payout sums exactly to the deposit.
//!
//! Issue 24: the escrow is funded with `fund_milestone` (0..=3 revisions included), and the
//! actions include revisions, deadline extensions and settlement by agreement (propose, accept with
//! the proposed or another share, withdraw, and a forged accept), so a settlement payout too always
//! sums to the deposit and the deadline rule follows the extended or revised deadline.
//!
//! Actions are drawn with any signer (the parties, the arbiter, an outsider) and, for the
//! settling instructions, also with one account swapped for a wrong one (Mallory's token account
//! as a payee, Mallory as rent receiver, a decoy order's vault or PDA). A refused action must
//! move nothing: every balance, every lamport of the order, the vaults and Alice, and the order's
//! state stay exactly as they were.
#![allow(deprecated)]

mod common;

use common::*;
use escrow::payout::split;
use escrow::instructions::request_revision::revised_deadline;
use escrow::state::{OrderState, PARTY_BUYER, PARTY_SELLER};
use escrow::MAX_PROPOSAL_LIFETIME;
use proptest::prelude::*;
use solana_sdk::signer::Signer;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Who {
    Alice,
    Bob,
    Pat,
    Carol,
    Mallory,
}

/// One account of a settling instruction replaced by a wrong one.
#[derive(Clone, Copy, Debug)]
enum Swap {
    /// Mallory's token account where a payee's (seller, buyer or treasury) belongs.
    Payee,
    /// Mallory's wallet as the rent receiver.
    RentReceiver,
    /// The decoy order's vault with this order.
    Vault,
    /// The decoy order's PDA with this order's vault.
    Order,
}

#[derive(Clone, Copy, Debug)]
enum Terminal {
    Release,
    Claim,
    Refund,
    Resolve(u16),
    Accept,
}

#[derive(Clone, Copy, Debug)]
enum Action {
    Deliver(Who),
    Release(Who),
    Claim(Who),
    Dispute(Who),
    Resolve(Who, u16),
    Refund(Who),
    /// A settling instruction by a signer the rules accept, with one account swapped.
    Forged(Terminal, Swap),
    Warp(i64),
    /// `propose_settlement` signed by the first, for the party (1 buyer, 2 seller, other: invalid),
    /// buyer bps, expiring that many seconds from now.
    Propose(Who, u8, u16, i64),
    /// `accept_settlement` with the proposed share (true) or another one (false).
    Accept(Who, bool, u16),
    Withdraw(Who),
    Revision(Who),
    /// `extend_deadline` to the current deadline plus this (may be <= 0).
    Extend(Who, i64),
}

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![Just(Who::Alice), Just(Who::Bob), Just(Who::Pat), Just(Who::Carol), Just(Who::Mallory)]
}

fn swap() -> impl Strategy<Value = Swap> {
    prop_oneof![Just(Swap::Payee), Just(Swap::RentReceiver), Just(Swap::Vault), Just(Swap::Order)]
}

fn terminal() -> impl Strategy<Value = Terminal> {
    prop_oneof![
        Just(Terminal::Release),
        Just(Terminal::Claim),
        Just(Terminal::Refund),
        (0u16..=10_000).prop_map(Terminal::Resolve),
        Just(Terminal::Accept),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        1 => who().prop_map(Action::Deliver),
        1 => who().prop_map(Action::Release),
        1 => who().prop_map(Action::Claim),
        1 => who().prop_map(Action::Dispute),
        1 => (who(), 0u16..=10_000).prop_map(|(w, bps)| Action::Resolve(w, bps)),
        1 => who().prop_map(Action::Refund),
        2 => (terminal(), swap()).prop_map(|(t, s)| Action::Forged(t, s)),
        3 => (0i64..=4 * DAY).prop_map(Action::Warp),
        2 => (who(), prop_oneof![4 => 1u8..=2, 1 => Just(0u8), 1 => Just(3u8)], prop_oneof![4 => 0u16..=10_000, 1 => 10_001u16..=u16::MAX], -DAY..=8 * DAY)
            .prop_map(|(w, party, bps, life)| Action::Propose(w, party, bps, life)),
        2 => (who(), prop_oneof![3 => Just(true), 1 => Just(false)], 0u16..=10_000).prop_map(|(w, same, bps)| Action::Accept(w, same, bps)),
        1 => who().prop_map(Action::Withdraw),
        1 => who().prop_map(Action::Revision),
        1 => (who(), -2 * DAY..=MAX_DELIVERY_WINDOW + DAY).prop_map(|(w, d)| Action::Extend(w, d)),
    ]
}

/// What the rules say should happen.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Model {
    Open {
        state: OrderState,
        delivered_at: i64,
        deadline: i64,
        /// (proposed_by, buyer_bps, expires_at)
        proposal: Option<(u8, u16, i64)>,
        revisions_left: u8,
    },
    Settled,
}

/// The party a key proposes/accepts as (None: not a party).
fn party_of(w: Who) -> Option<u8> {
    match w {
        Who::Alice => Some(PARTY_BUYER),
        Who::Bob => Some(PARTY_SELLER),
        _ => None,
    }
}

fn predict(m: Model, a: Action, now: i64, window: i64) -> bool {
    if let Action::Warp(_) = a {
        return true;
    }
    let Model::Open { state, delivered_at, deadline, proposal, revisions_left } = m else { return false };
    let due = delivered_at + window;
    match a {
        Action::Deliver(w) => state == OrderState::Funded && matches!(w, Who::Bob | Who::Pat),
        Action::Release(w) => state != OrderState::Disputed && matches!(w, Who::Alice | Who::Pat),
        // Anyone may crank a claim.
        Action::Claim(_) => state == OrderState::Delivered && now >= due,
        Action::Dispute(w) => {
            matches!(w, Who::Alice | Who::Bob | Who::Pat)
                && (state == OrderState::Funded || (state == OrderState::Delivered && now < due))
        }
        Action::Resolve(w, _) => state == OrderState::Disputed && w == Who::Carol,
        Action::Refund(w) => match w {
            Who::Bob | Who::Pat => true,
            // Deadline rule: after a missed deadline with no on-time delivery; a late delivery
            // only until auto-release; a dispute does not stop the clock.
            Who::Alice => {
                let on_time = delivered_at != 0 && delivered_at <= deadline;
                now > deadline
                    && !on_time
                    && match state {
                        OrderState::Funded | OrderState::Disputed => true,
                        OrderState::Delivered => now < due,
                    }
            }
            Who::Carol | Who::Mallory => false,
        },
        Action::Forged(..) => false,
        Action::Warp(_) => unreachable!(),
        Action::Propose(w, party, bps, life) => {
            matches!(party, PARTY_BUYER | PARTY_SELLER)
                && (w == Who::Pat || party_of(w) == Some(party))
                && bps <= 10_000
                && life > 0
                && life <= MAX_PROPOSAL_LIFETIME
        }
        Action::Accept(w, same, bps) => match proposal {
            None => false,
            Some((by, proposed_bps, expires_at)) => {
                matches!(w, Who::Alice | Who::Bob | Who::Pat)
                    && party_of(w) != Some(by)
                    && (same || bps == proposed_bps)
                    && now < expires_at
            }
        },
        Action::Withdraw(w) => match proposal {
            None => false,
            Some((by, ..)) => w == Who::Pat || party_of(w) == Some(by),
        },
        Action::Revision(w) => {
            matches!(w, Who::Alice | Who::Pat) && state == OrderState::Delivered && now < due && revisions_left > 0
        }
        Action::Extend(w, delta) => {
            let new = deadline + delta;
            matches!(w, Who::Alice | Who::Pat)
                && state == OrderState::Funded
                && new > deadline
                && new > now
                && new - now <= MAX_DELIVERY_WINDOW
        }
    }
}

/// Everything a refused action must leave untouched.
#[derive(Debug, PartialEq)]
struct Snapshot {
    tokens: [u64; 6],
    lamports: [u64; 4],
    /// The order account's bytes (state, deadline, proposal, revisions: everything).
    order: Option<Vec<u8>>,
}

async fn snapshot(env: &mut Env, o: &OrderRef, decoy: &OrderRef) -> Snapshot {
    let m = o.mint;
    let (alice, bob, trent, mallory) = (env.alice.pubkey(), env.bob.pubkey(), env.trent.pubkey(), env.mallory.pubkey());
    Snapshot {
        tokens: [
            env.balance(alice, m).await,
            env.balance(bob, m).await,
            env.balance(trent, m).await,
            env.balance(mallory, m).await,
            env.balance_of(o.vault).await,
            env.balance_of(decoy.vault).await,
        ],
        lamports: [
            env.lamports(alice).await,
            env.lamports(o.pda).await,
            env.lamports(o.vault).await,
            env.lamports(decoy.pda).await,
        ],
        order: env.ctx.banks_client.get_account(o.pda).await.unwrap().map(|a| a.data),
    }
}

async fn forged(env: &mut Env, o: &OrderRef, decoy: &OrderRef, t: Terminal, s: Swap, keys: &Keys) -> TxResult {
    let mallory = env.mallory.pubkey();
    let mallory_tokens = env.ata(mallory, o.mint);
    match t {
        Terminal::Release => {
            let mut a = env.release_accounts(o, keys.pat.pubkey());
            match s {
                Swap::Payee => a.seller_token_account = mallory_tokens,
                Swap::RentReceiver => a.rent_payer = mallory,
                Swap::Vault => a.vault = decoy.vault,
                Swap::Order => a.order = decoy.pda,
            }
            let ix = env.ix_release_with(a);
            env.send(vec![ix], &[&keys.pat]).await
        }
        Terminal::Claim => {
            let mut a = env.claim_accounts(o, mallory);
            match s {
                Swap::Payee => a.treasury_token_account = mallory_tokens,
                Swap::RentReceiver => a.rent_payer = mallory,
                Swap::Vault => a.vault = decoy.vault,
                Swap::Order => a.order = decoy.pda,
            }
            let ix = env.ix_claim_with(a);
            env.send(vec![ix], &[&keys.mallory]).await
        }
        Terminal::Refund => {
            let mut a = env.refund_accounts(o, keys.pat.pubkey());
            match s {
                Swap::Payee => a.buyer_token_account = mallory_tokens,
                Swap::RentReceiver => a.rent_payer = mallory,
                Swap::Vault => a.vault = decoy.vault,
                Swap::Order => a.order = decoy.pda,
            }
            let ix = env.ix_refund_with(a);
            env.send(vec![ix], &[&keys.pat]).await
        }
        Terminal::Resolve(bps) => {
            let mut a = env.resolve_accounts(o, keys.carol.pubkey());
            match s {
                // The payee swapped depends on the split: whoever would receive something.
                Swap::Payee if bps == 0 => a.seller_token_account = mallory_tokens,
                Swap::Payee => a.buyer_token_account = mallory_tokens,
                Swap::RentReceiver => a.rent_payer = mallory,
                Swap::Vault => a.vault = decoy.vault,
                Swap::Order => a.order = decoy.pda,
            }
            let ix = env.ix_resolve_with(a, bps);
            env.send(vec![ix], &[&keys.carol]).await
        }
        Terminal::Accept => {
            // The platform may accept any pending proposal; with its own share, so only the swap fails.
            let bps = env.order(o).await.map(|order| order.settlement.buyer_bps).unwrap_or(0);
            let mut a = env.accept_accounts(o, keys.pat.pubkey());
            match s {
                Swap::Payee if bps == 0 => a.seller_token_account = mallory_tokens,
                Swap::Payee => a.buyer_token_account = mallory_tokens,
                Swap::RentReceiver => a.rent_payer = mallory,
                Swap::Vault => a.vault = decoy.vault,
                Swap::Order => a.order = decoy.pda,
            }
            let ix = env.ix_accept_with(a, bps);
            env.send(vec![ix], &[&keys.pat]).await
        }
    }
}

struct Keys {
    alice: solana_sdk::signature::Keypair,
    bob: solana_sdk::signature::Keypair,
    pat: solana_sdk::signature::Keypair,
    carol: solana_sdk::signature::Keypair,
    mallory: solana_sdk::signature::Keypair,
}

impl Keys {
    fn of(&self, w: Who) -> &solana_sdk::signature::Keypair {
        match w {
            Who::Alice => &self.alice,
            Who::Bob => &self.bob,
            Who::Pat => &self.pat,
            Who::Carol => &self.carol,
            Who::Mallory => &self.mallory,
        }
    }
}

async fn run(use_t22: bool, amount: u64, deadline_in: i64, window: i64, revisions: u8, actions: Vec<Action>) {
    let mut env = Env::new().await;
    let mint = if use_t22 { env.t22 } else { env.usdc };
    let decoy_amount = 1_000;
    let o = env.order_ref(mint, amount.min(ALICE_START - decoy_amount));
    let amount = o.amount;
    let deadline = env.now().await + deadline_in;
    let mut args = env.milestone_args(&o, o.id, 1, revisions).await;
    args.delivery_deadline = deadline;
    args.review_window = window;
    let ix = env.ix_fund_milestone(&o, args);
    let (alice_kp, pat_kp) = (kp(&env.alice), kp(&env.platform));
    env.send(vec![ix], &[&alice_kp, &pat_kp]).await.unwrap();
    // A second open order of Alice's, only ever named by forged instructions: it must never move.
    let decoy = env.funded_order(mint, decoy_amount).await;
    let window = if window == 0 { REVIEW_WINDOW } else { window };
    let (alice, bob, trent) = (env.alice.pubkey(), env.bob.pubkey(), env.trent.pubkey());
    let keys = Keys { alice: kp(&env.alice), bob: kp(&env.bob), pat: kp(&env.platform), carol: kp(&env.carol), mallory: kp(&env.mallory) };
    let decoy_before = (env.balance_of(decoy.vault).await, env.lamports(decoy.pda).await);

    let mut model =
        Model::Open { state: OrderState::Funded, delivered_at: 0, deadline, proposal: None, revisions_left: revisions };
    for a in actions {
        let now = env.now().await;
        let expected = predict(model, a, now, window);
        let before = snapshot(&mut env, &o, &decoy).await;
        let proposed_bps = match model {
            Model::Open { proposal: Some((_, bps, _)), .. } => bps,
            _ => 0,
        };
        let result = match a {
            Action::Deliver(w) => env.deliver(&o, keys.of(w)).await,
            Action::Release(w) => env.release(&o, keys.of(w)).await,
            Action::Claim(w) => env.claim(&o, keys.of(w)).await,
            Action::Dispute(w) => env.dispute(&o, keys.of(w)).await,
            Action::Resolve(w, bps) => env.resolve(&o, keys.of(w), bps).await,
            Action::Refund(w) => env.refund(&o, keys.of(w)).await,
            Action::Forged(t, s) => forged(&mut env, &o, &decoy, t, s, &keys).await,
            Action::Warp(s) => {
                env.warp_by(s).await;
                Ok(())
            }
            Action::Propose(w, party, bps, life) => env.propose(&o, keys.of(w), party, bps, now + life).await,
            Action::Accept(w, same, bps) => env.accept(&o, keys.of(w), if same { proposed_bps } else { bps }).await,
            Action::Withdraw(w) => env.withdraw(&o, keys.of(w)).await,
            Action::Revision(w) => env.request_revision(&o, keys.of(w)).await,
            Action::Extend(w, delta) => {
                // On a settled order any deadline does (the account is gone).
                let deadline = if let Model::Open { deadline, .. } = model { deadline } else { now };
                env.extend_deadline(&o, keys.of(w), deadline + delta).await
            }
        };
        assert_eq!(result.is_ok(), expected, "{a:?} in {model:?} at {now}: {result:?}");

        if result.is_err() {
            assert_eq!(snapshot(&mut env, &o, &decoy).await, before, "refused {a:?} moved something");
        } else {
            let terminal = match a {
                Action::Release(_) | Action::Claim(_) => Some(split(amount, 0, FEE_BPS).unwrap()),
                Action::Resolve(_, bps) => Some(split(amount, bps, FEE_BPS).unwrap()),
                Action::Refund(_) => Some(split(amount, 10_000, FEE_BPS).unwrap()),
                Action::Accept(..) => Some(split(amount, proposed_bps, FEE_BPS).unwrap()),
                _ => None,
            };
            if let Some(p) = terminal {
                assert_eq!(p.buyer + p.seller + p.fee, amount);
                assert_eq!(env.balance(alice, mint).await, ALICE_START - amount - decoy_amount + p.buyer);
                assert_eq!(env.balance(bob, mint).await, p.seller);
                assert_eq!(env.balance(trent, mint).await, p.fee);
                assert!(!env.exists(o.pda).await && !env.exists(o.vault).await);
                // All the rent of the order and its vault went back to Alice.
                assert_eq!(env.lamports(alice).await, before.lamports[0] + before.lamports[1] + before.lamports[2]);
                model = Model::Settled;
            } else if let Model::Open { state, delivered_at, deadline, proposal, revisions_left } = model {
                model = match a {
                    Action::Deliver(_) => Model::Open { state: OrderState::Delivered, delivered_at: now, deadline, proposal, revisions_left },
                    Action::Dispute(_) => Model::Open { state: OrderState::Disputed, delivered_at, deadline, proposal, revisions_left },
                    Action::Propose(_, party, bps, life) => {
                        Model::Open { state, delivered_at, deadline, proposal: Some((party, bps, now + life)), revisions_left }
                    }
                    Action::Withdraw(_) => Model::Open { state, delivered_at, deadline, proposal: None, revisions_left },
                    Action::Revision(_) => Model::Open {
                        state: OrderState::Funded,
                        delivered_at: 0,
                        deadline: revised_deadline(deadline, delivered_at, now, MAX_DELIVERY_WINDOW).unwrap(),
                        proposal,
                        revisions_left: revisions_left - 1,
                    },
                    Action::Extend(_, delta) => Model::Open { state, delivered_at, deadline: deadline + delta, proposal, revisions_left },
                    _ => model,
                };
            }
        }

        // Conservation after every step; Mallory never ends up with anything.
        let total = env.balance(alice, mint).await
            + env.balance(bob, mint).await
            + env.balance(trent, mint).await
            + env.balance(env.mallory.pubkey(), mint).await
            + env.balance_of(o.vault).await
            + env.balance_of(decoy.vault).await;
        assert_eq!(total, ALICE_START, "tokens created or destroyed after {a:?}");
        assert_eq!(env.balance(env.mallory.pubkey(), mint).await, 0, "Mallory got paid after {a:?}");
        assert_eq!((env.balance_of(decoy.vault).await, env.lamports(decoy.pda).await), decoy_before, "the decoy moved after {a:?}");
        if let Model::Open { state, delivered_at, deadline, proposal, revisions_left } = model {
            let order = env.order(&o).await.unwrap();
            assert_eq!(order.state, state);
            assert_eq!((order.delivered_at, order.delivery_deadline), (delivered_at, deadline));
            assert_eq!(order.revisions_included - order.revisions_used, revisions_left);
            let on_chain = order.settlement;
            assert_eq!(proposal, (on_chain.proposed_by != 0).then_some((on_chain.proposed_by, on_chain.buyer_bps, on_chain.expires_at)));
            assert_eq!(env.balance_of(o.vault).await, amount);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_lifecycles_conserve_every_token(
        use_t22 in any::<bool>(),
        amount in 1u64..=ALICE_START,
        deadline_in in 60i64..=10 * DAY,
        window in prop_oneof![Just(0i64), 1i64..=5 * DAY],
        revisions in 0u8..=3,
        actions in proptest::collection::vec(action(), 1..16),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(run(use_t22, amount, deadline_in, window, revisions, actions));
    }
}
