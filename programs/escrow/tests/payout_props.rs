//! payout::split over many values: conservation, floor rounding, bounds.

use escrow::errors::EscrowError;
use escrow::payout::{split, Payouts};
use escrow::{BPS_DENOMINATOR, MAX_FEE_BPS};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn payouts_always_sum_to_the_deposit(amount in any::<u64>(), buyer_bps in 0..=BPS_DENOMINATOR, fee_bps in 0..=MAX_FEE_BPS) {
        let p = split(amount, buyer_bps, fee_bps).unwrap();
        prop_assert_eq!(p.total(), Some(amount));
    }

    #[test]
    fn each_share_is_the_floor_of_its_rate(amount in any::<u64>(), buyer_bps in 0..=BPS_DENOMINATOR, fee_bps in 0..=MAX_FEE_BPS) {
        let p = split(amount, buyer_bps, fee_bps).unwrap();
        let buyer = (amount as u128 * buyer_bps as u128 / 10_000) as u64;
        let gross = amount - buyer;
        let fee = (gross as u128 * fee_bps as u128 / 10_000) as u64;
        prop_assert_eq!(p, Payouts { buyer, seller: gross - fee, fee });
        // The fee never exceeds its rate of the seller's gross and never touches the buyer's share.
        prop_assert!(p.fee as u128 * 10_000 <= gross as u128 * fee_bps as u128);
        prop_assert!(p.fee as u128 * 10_000 <= amount as u128 * MAX_FEE_BPS as u128);
    }

    #[test]
    fn release_and_refund_are_the_extremes(amount in any::<u64>(), fee_bps in 0..=MAX_FEE_BPS) {
        let release = split(amount, 0, fee_bps).unwrap();
        prop_assert_eq!(release.buyer, 0);
        prop_assert_eq!(release.seller + release.fee, amount);
        let refund = split(amount, BPS_DENOMINATOR, fee_bps).unwrap();
        prop_assert_eq!(refund, Payouts { buyer: amount, seller: 0, fee: 0 });
    }

    #[test]
    fn more_for_the_buyer_never_means_more_for_the_seller(amount in any::<u64>(), a in 0..=BPS_DENOMINATOR, b in 0..=BPS_DENOMINATOR, fee_bps in 0..=MAX_FEE_BPS) {
        let (lo, hi) = (a.min(b), a.max(b));
        let (p_lo, p_hi) = (split(amount, lo, fee_bps).unwrap(), split(amount, hi, fee_bps).unwrap());
        prop_assert!(p_hi.buyer >= p_lo.buyer);
        prop_assert!(p_hi.seller <= p_lo.seller);
    }

    #[test]
    fn out_of_range_rates_are_refused(amount in any::<u64>(), buyer_bps in (BPS_DENOMINATOR + 1)..=u16::MAX, fee_bps in (MAX_FEE_BPS + 1)..=u16::MAX) {
        prop_assert_eq!(split(amount, buyer_bps, 0).unwrap_err(), EscrowError::BuyerBpsTooHigh.into());
        prop_assert_eq!(split(amount, 0, fee_bps).unwrap_err(), EscrowError::FeeTooHigh.into());
    }

    /// Issue 24: `accept_settlement` pays `split(amount, proposed bps, fee_bps)`: whatever the
    /// agreed share, the payouts sum to the deposit, the buyer gets exactly her share (no fee on
    /// it) and the fee is at most its rate of the seller's share; a cancel (10000) takes no fee.
    #[test]
    fn a_settlement_by_agreement_pays_the_agreed_share_and_sums_to_the_deposit(amount in any::<u64>(), buyer_bps in 0..=BPS_DENOMINATOR, fee_bps in 0..=MAX_FEE_BPS) {
        let p = split(amount, buyer_bps, fee_bps).unwrap();
        prop_assert_eq!(p.total(), Some(amount));
        prop_assert_eq!(p.buyer as u128, amount as u128 * buyer_bps as u128 / 10_000);
        let seller_share = amount - p.buyer;
        prop_assert_eq!(p.seller + p.fee, seller_share);
        prop_assert!(p.fee as u128 * 10_000 <= seller_share as u128 * fee_bps as u128);
        if buyer_bps == BPS_DENOMINATOR {
            prop_assert_eq!(p.fee, 0);
        }
    }
}
