use crate::constants::{CONFIG_SEED, MIN_REVISION_SECONDS, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::RevisionRequested;
use crate::state::{Config, Order, OrderState};
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct RequestRevision<'info> {
    /// The buyer or the platform authority (for her).
    pub authority: Signer<'info>,
    #[account(
        seeds = [CONFIG_SEED],
        bump = config.bump,
        constraint = config.is_current() @ EscrowError::AccountNotMigrated,
    )]
    pub config: Box<Account<'info, Config>>,
    #[account(
        mut,
        seeds = [ORDER_SEED, order.order_id.as_ref()],
        bump = order.bump,
        constraint = order.is_current() @ EscrowError::AccountNotMigrated,
        constraint = authority.key() == order.buyer
            || authority.key() == config.platform_authority @ EscrowError::NotBuyerOrPlatform,
    )]
    pub order: Box<Account<'info, Order>>,
}

/// Delivery deadline after a revision requested at `now` (unix seconds) on work delivered at
/// `delivered_at` against `deadline`: the seller gets back the time that was left when she
/// delivered (none when she delivered late), at least MIN_REVISION_SECONDS, counted from now:
/// `max(deadline, min(now + max(deadline - delivered_at, 0).max(MIN_REVISION_SECONDS), now + max_delivery_window))`.
/// The cap is the config's delivery window (as for `fund`); the deadline never moves earlier.
/// None on overflow.
pub fn revised_deadline(deadline: i64, delivered_at: i64, now: i64, max_delivery_window: i64) -> Option<i64> {
    let left = deadline.checked_sub(delivered_at)?.max(0).max(MIN_REVISION_SECONDS);
    let proposed = now.checked_add(left)?.min(now.checked_add(max_delivery_window)?);
    Some(deadline.max(proposed))
}

/// Delivered and before auto-release is due (`OrderNotDelivered`, `ReviewWindowElapsed`), with a
/// revision left (`revisions_used < revisions_included`, else `RevisionLimitReached`): back to
/// Funded, `delivered_at = 0` (the auto-release timer stops: `claim` needs Delivered), the delivery
/// deadline moves by `revised_deadline`, `revisions_used += 1`.
pub fn handler(ctx: Context<RequestRevision>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let max_delivery_window = ctx.accounts.config.max_delivery_window;
    let order = &mut ctx.accounts.order;
    require!(order.state == OrderState::Delivered, EscrowError::OrderNotDelivered);
    let due = order.auto_release_at().ok_or(EscrowError::MathOverflow)?;
    require!(now < due, EscrowError::ReviewWindowElapsed);
    require!(order.revisions_used < order.revisions_included, EscrowError::RevisionLimitReached);
    order.delivery_deadline = revised_deadline(order.delivery_deadline, order.delivered_at, now, max_delivery_window)
        .ok_or(EscrowError::MathOverflow)?;
    order.state = OrderState::Funded;
    order.delivered_at = 0;
    order.revisions_used += 1;
    crate::emit_event!(RevisionRequested {
        order: order.key(),
        order_id: order.order_id,
        by: ctx.accounts.authority.key(),
        revisions_used: order.revisions_used,
        revisions_included: order.revisions_included,
        delivery_deadline: order.delivery_deadline,
        requested_at: now,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    const DAY: i64 = 24 * 3600;

    #[test]
    fn the_seller_gets_back_the_time_left_at_delivery() {
        // delivered 3 days early, revision requested a day later: 3 days from now
        assert_eq!(revised_deadline(10 * DAY, 7 * DAY, 8 * DAY, 90 * DAY), Some(11 * DAY));
    }

    #[test]
    fn at_least_a_day_and_never_earlier() {
        // delivered an hour early: a day from now
        assert_eq!(revised_deadline(10 * DAY, 10 * DAY - 3600, 10 * DAY, 90 * DAY), Some(11 * DAY));
        // delivered late: a day from now
        assert_eq!(revised_deadline(10 * DAY, 12 * DAY, 13 * DAY, 90 * DAY), Some(14 * DAY));
        // the old deadline is later than now + time left: unchanged
        assert_eq!(revised_deadline(20 * DAY, DAY, 2 * DAY - 1, 90 * DAY), Some(21 * DAY - 1));
        assert_eq!(revised_deadline(20 * DAY, 19 * DAY, 2 * DAY, 90 * DAY), Some(20 * DAY));
    }

    #[test]
    fn capped_by_the_delivery_window() {
        assert_eq!(revised_deadline(60 * DAY, DAY, 2 * DAY, 30 * DAY), Some(60 * DAY));
        assert_eq!(revised_deadline(40 * DAY, DAY, 20 * DAY, 30 * DAY), Some(50 * DAY));
        assert_eq!(revised_deadline(i64::MAX, i64::MIN, 0, 1), None);
    }
}
