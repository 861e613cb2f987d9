//! Pure payout arithmetic, shared by every terminal instruction and unit-tested on its own.
//! Conservation: `buyer + seller + fee == amount`, always.

use crate::constants::{BPS_DENOMINATOR, MAX_FEE_BPS};
use crate::errors::EscrowError;
use anchor_lang::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payouts {
    pub buyer: u64,
    pub seller: u64,
    pub fee: u64,
}

impl Payouts {
    pub fn total(&self) -> Option<u64> {
        self.buyer.checked_add(self.seller)?.checked_add(self.fee)
    }
}

/// buyer = floor(amount * buyer_bps / 10000); seller gross = amount - buyer;
/// fee = floor(seller gross * fee_bps / 10000); seller = seller gross - fee.
pub fn split(amount: u64, buyer_bps: u16, fee_bps: u16) -> Result<Payouts> {
    require!(buyer_bps <= BPS_DENOMINATOR, EscrowError::BuyerBpsTooHigh);
    require!(fee_bps <= MAX_FEE_BPS, EscrowError::FeeTooHigh);
    let buyer = bps_of(amount, buyer_bps)?;
    let seller_gross = amount.checked_sub(buyer).ok_or(EscrowError::MathOverflow)?;
    let fee = bps_of(seller_gross, fee_bps)?;
    let seller = seller_gross.checked_sub(fee).ok_or(EscrowError::MathOverflow)?;
    Ok(Payouts { buyer, seller, fee })
}

/// floor(value * bps / 10000) in u128 so no intermediate can overflow.
fn bps_of(value: u64, bps: u16) -> Result<u64> {
    let scaled = (value as u128)
        .checked_mul(bps as u128)
        .and_then(|v| v.checked_div(BPS_DENOMINATOR as u128))
        .ok_or(EscrowError::MathOverflow)?;
    u64::try_from(scaled).map_err(|_| error!(EscrowError::MathOverflow))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_pays_seller_minus_fee() {
        assert_eq!(split(1_000_000, 0, 250).unwrap(), Payouts { buyer: 0, seller: 975_000, fee: 25_000 });
    }

    #[test]
    fn refund_pays_everything_back_without_fee() {
        assert_eq!(split(1_000_001, 10_000, 1_000).unwrap(), Payouts { buyer: 1_000_001, seller: 0, fee: 0 });
    }

    #[test]
    fn fee_rounds_down_in_the_seller_s_favour() {
        assert_eq!(split(3, 0, 1_000).unwrap(), Payouts { buyer: 0, seller: 3, fee: 0 });
        assert_eq!(split(u64::MAX, 5_000, 1_000).unwrap().total(), Some(u64::MAX));
    }

    #[test]
    fn rejects_out_of_range_bps() {
        assert_eq!(split(100, 10_001, 0).unwrap_err(), EscrowError::BuyerBpsTooHigh.into());
        assert_eq!(split(100, 0, MAX_FEE_BPS + 1).unwrap_err(), EscrowError::FeeTooHigh.into());
        // The bounds themselves are accepted.
        assert_eq!(split(100, 10_000, MAX_FEE_BPS).unwrap(), Payouts { buyer: 100, seller: 0, fee: 0 });
    }
}
