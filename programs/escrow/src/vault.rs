//! Moves tokens out of an order's vault and closes it, signed by the order PDA.

use crate::constants::ORDER_SEED;
use crate::state::Order;
use anchor_lang::prelude::*;
use anchor_spl::token_interface::{
    close_account, transfer_checked, CloseAccount, Mint, TokenAccount, TokenInterface,
    TransferChecked,
};

pub struct Vault<'a, 'info> {
    pub order: &'a Account<'info, Order>,
    pub vault: &'a mut InterfaceAccount<'info, TokenAccount>,
    pub mint: &'a InterfaceAccount<'info, Mint>,
    pub token_program: &'a Interface<'info, TokenInterface>,
}

impl<'a, 'info> Vault<'a, 'info> {
    fn pay(&self, to: &AccountInfo<'info>, amount: u64) -> Result<()> {
        if amount == 0 {
            return Ok(());
        }
        let bump = [self.order.bump];
        let seeds: &[&[u8]] = &[ORDER_SEED, self.order.order_id.as_ref(), &bump];
        transfer_checked(
            CpiContext::new_with_signer(
                self.token_program.to_account_info(),
                TransferChecked {
                    from: self.vault.to_account_info(),
                    mint: self.mint.to_account_info(),
                    to: to.clone(),
                    authority: self.order.to_account_info(),
                },
                &[seeds],
            ),
            amount,
            self.mint.decimals,
        )
    }

    /// Pays each `(token account, amount)`, sends anything else found in the vault (tokens
    /// someone transferred into it unasked) to `surplus_to` so it can never block the close,
    /// then closes the vault with its rent going to `rent_to`.
    pub fn settle(
        self,
        payments: &[(AccountInfo<'info>, u64)],
        surplus_to: &AccountInfo<'info>,
        rent_to: &AccountInfo<'info>,
    ) -> Result<()> {
        for (to, amount) in payments {
            self.pay(to, *amount)?;
        }
        self.vault.reload()?;
        let surplus = self.vault.amount;
        if surplus > 0 {
            msg!("sweeping {} surplus base units", surplus);
            self.pay(surplus_to, surplus)?;
        }
        let bump = [self.order.bump];
        let seeds: &[&[u8]] = &[ORDER_SEED, self.order.order_id.as_ref(), &bump];
        close_account(CpiContext::new_with_signer(
            self.token_program.to_account_info(),
            CloseAccount {
                account: self.vault.to_account_info(),
                destination: rent_to.clone(),
                authority: self.order.to_account_info(),
            },
            &[seeds],
        ))
    }
}
