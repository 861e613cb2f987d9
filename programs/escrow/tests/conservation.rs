//! Random lifecycles against the real runtime: a model predicts which actions succeed, and after
//! every step the tokens held by Alice, Bob, the treasury and the vault add up to what Alice
//! started with. Every terminal payout sums exactly to the deposit.
#![allow(deprecated)]

mod common;

use common::*;
use escrow::payout::split;
use escrow::state::OrderState;
use proptest::prelude::*;
use solana_sdk::signer::Signer;

#[derive(Clone, Copy, Debug)]
enum Who {
    Alice,
    Bob,
    Pat,
    Mallory,
}

#[derive(Clone, Copy, Debug)]
enum Action {
    Deliver(Who),
    Release(Who),
    Claim,
    Dispute(Who),
    Resolve(u16),
    Refund(Who),
    Warp(i64),
}

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![Just(Who::Alice), Just(Who::Bob), Just(Who::Pat), Just(Who::Mallory)]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        1 => who().prop_map(Action::Deliver),
        1 => who().prop_map(Action::Release),
        1 => Just(Action::Claim),
        1 => who().prop_map(Action::Dispute),
        1 => (0u16..=10_000).prop_map(Action::Resolve),
        1 => who().prop_map(Action::Refund),
        3 => (0i64..=4 * DAY).prop_map(Action::Warp),
    ]
}

/// What the rules say should happen.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Model {
    Open { state: OrderState, delivered_at: i64 },
    Settled,
}

fn predict(m: Model, a: Action, now: i64, deadline: i64, window: i64) -> bool {
    if let Action::Warp(_) = a {
        return true;
    }
    let Model::Open { state, delivered_at } = m else { return false };
    let due = delivered_at + window;
    match a {
        Action::Deliver(w) => state == OrderState::Funded && matches!(w, Who::Bob | Who::Pat),
        Action::Release(w) => state != OrderState::Disputed && matches!(w, Who::Alice | Who::Pat),
        Action::Claim => state == OrderState::Delivered && now >= due,
        Action::Dispute(w) => {
            !matches!(w, Who::Mallory)
                && (state == OrderState::Funded || (state == OrderState::Delivered && now < due))
        }
        Action::Resolve(_) => state == OrderState::Disputed,
        Action::Refund(w) => match w {
            Who::Bob | Who::Pat => true,
            Who::Alice => state == OrderState::Funded && now > deadline,
            Who::Mallory => false,
        },
        Action::Warp(_) => unreachable!(),
    }
}

async fn run(use_t22: bool, amount: u64, deadline_in: i64, window: i64, actions: Vec<Action>) {
    let mut env = Env::new().await;
    let mint = if use_t22 { env.t22 } else { env.usdc };
    let o = env.order_ref(mint, amount);
    let deadline = env.now().await + deadline_in;
    env.fund(&o, deadline, window).await.unwrap();
    let window = if window == 0 { REVIEW_WINDOW } else { window };
    let (alice, bob, trent) = (env.alice.pubkey(), env.bob.pubkey(), env.trent.pubkey());
    let keys = [kp(&env.alice), kp(&env.bob), kp(&env.platform), kp(&env.mallory), kp(&env.carol)];
    let key = |w: Who| match w {
        Who::Alice => &keys[0],
        Who::Bob => &keys[1],
        Who::Pat => &keys[2],
        Who::Mallory => &keys[3],
    };

    let mut model = Model::Open { state: OrderState::Funded, delivered_at: 0 };
    for a in actions {
        let now = env.now().await;
        let expected = predict(model, a, now, deadline, window);
        let result = match a {
            Action::Deliver(w) => env.deliver(&o, key(w)).await,
            Action::Release(w) => env.release(&o, key(w)).await,
            Action::Claim => env.claim(&o, key(Who::Mallory)).await,
            Action::Dispute(w) => env.dispute(&o, key(w)).await,
            Action::Resolve(bps) => env.resolve(&o, &keys[4], bps).await,
            Action::Refund(w) => env.refund(&o, key(w)).await,
            Action::Warp(s) => {
                env.warp_by(s).await;
                Ok(())
            }
        };
        assert_eq!(result.is_ok(), expected, "{a:?} in {model:?} at {now}: {result:?}");

        if result.is_ok() {
            let terminal = match a {
                Action::Release(_) | Action::Claim => Some(split(amount, 0, FEE_BPS).unwrap()),
                Action::Resolve(bps) => Some(split(amount, bps, FEE_BPS).unwrap()),
                Action::Refund(_) => Some(split(amount, 10_000, FEE_BPS).unwrap()),
                _ => None,
            };
            if let Some(p) = terminal {
                assert_eq!(p.buyer + p.seller + p.fee, amount);
                assert_eq!(env.balance(alice, mint).await, ALICE_START - amount + p.buyer);
                assert_eq!(env.balance(bob, mint).await, p.seller);
                assert_eq!(env.balance(trent, mint).await, p.fee);
                assert!(!env.exists(o.pda).await && !env.exists(o.vault).await);
                model = Model::Settled;
            } else if let (Model::Open { .. }, Action::Deliver(_)) = (model, a) {
                model = Model::Open { state: OrderState::Delivered, delivered_at: now };
            } else if let (Model::Open { delivered_at, .. }, Action::Dispute(_)) = (model, a) {
                model = Model::Open { state: OrderState::Disputed, delivered_at };
            }
        }

        // Conservation after every step.
        let total = env.balance(alice, mint).await
            + env.balance(bob, mint).await
            + env.balance(trent, mint).await
            + env.balance_of(o.vault).await;
        assert_eq!(total, ALICE_START, "tokens created or destroyed after {a:?}");
        if let Model::Open { state, .. } = model {
            assert_eq!(env.order(&o).await.unwrap().state, state);
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
        actions in proptest::collection::vec(action(), 1..12),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(run(use_t22, amount, deadline_in, window, actions));
    }
}
