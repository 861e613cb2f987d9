//! The JSON-RPC methods, one module per method group as agave's `rpc/src/rpc.rs` groups them
//! (its `Minimal`, `BankData`, `AccountsData`/`AccountsScan` and `Full` traits, deprecated methods
//! apart), plus the localnet's own dev methods, and the dispatch table from method name to handler.
//!
//! A handler is an async fn `(chain, params) -> RpcResult`; it runs after `Chain::handle` brought
//! the chain to the present. The modules are children of `chain`, so handlers use the chain's
//! private state and helpers directly.
//!
//! Adding a method: write the handler in its group's module and add its row to `METHODS`.

mod accounts;
mod bank;
mod deprecated;
mod dev;
mod minimal;
mod transactions;

use futures::future::LocalBoxFuture;

use super::Chain;
use crate::rpc::{Params, RpcResult};

/// A method handler: borrows the chain and the params for the duration of the call.
pub type Handler = for<'a> fn(&'a mut Chain, Params<'a>) -> LocalBoxFuture<'a, RpcResult>;

/// An `async fn(&mut Chain, Params<'_>) -> RpcResult` as a `Handler` (boxes its future).
macro_rules! handler {
    ($f:path) => {{
        fn h<'a>(c: &'a mut Chain, p: Params<'a>) -> LocalBoxFuture<'a, RpcResult> {
            Box::pin($f(c, p))
        }
        h as Handler
    }};
}

/// Every method the node answers (37), by group: name -> handler.
pub static METHODS: &[(&str, Handler)] = &[
    // minimal: agave `Minimal`: the node and its chain position
    ("getHealth", handler!(minimal::get_health)),
    ("getVersion", handler!(minimal::get_version)),
    ("getGenesisHash", handler!(minimal::get_genesis_hash)),
    ("getIdentity", handler!(minimal::get_identity)),
    ("getSlot", handler!(minimal::get_slot)),
    ("getBlockHeight", handler!(minimal::get_block_height)),
    ("getTransactionCount", handler!(minimal::get_transaction_count)),
    ("getEpochInfo", handler!(minimal::get_epoch_info)),
    ("getBalance", handler!(minimal::get_balance)),
    // bank: agave `BankData` and the bank reads of `Full`: epochs, rent, blockhashes, fees, block time
    ("getEpochSchedule", handler!(bank::get_epoch_schedule)),
    ("getMinimumBalanceForRentExemption", handler!(bank::get_minimum_balance_for_rent_exemption)),
    ("getLatestBlockhash", handler!(bank::get_latest_blockhash)),
    ("isBlockhashValid", handler!(bank::is_blockhash_valid)),
    ("getFeeForMessage", handler!(bank::get_fee_for_message)),
    ("getRecentPrioritizationFees", handler!(bank::get_recent_prioritization_fees)),
    ("getBlockTime", handler!(bank::get_block_time)),
    ("getFirstAvailableBlock", handler!(bank::get_first_available_block)),
    ("minimumLedgerSlot", handler!(bank::get_first_available_block)),
    // accounts: agave `AccountsData` and `AccountsScan`: accounts by key, token balances, scans over known accounts
    ("getAccountInfo", handler!(accounts::get_account_info)),
    ("getMultipleAccounts", handler!(accounts::get_multiple_accounts)),
    ("getTokenAccountBalance", handler!(accounts::get_token_account_balance)),
    ("getTokenSupply", handler!(accounts::get_token_supply)),
    ("getProgramAccounts", handler!(accounts::get_program_accounts)),
    ("getTokenAccountsByOwner", handler!(accounts::get_token_accounts_by_owner)),
    ("getTokenAccountsByDelegate", handler!(accounts::get_token_accounts_by_delegate)),
    // transactions: agave `Full`: send, simulate, airdrop, statuses and history
    ("getSignatureStatuses", handler!(transactions::get_signature_statuses)),
    ("getSignaturesForAddress", handler!(transactions::get_signatures_for_address)),
    ("getTransaction", handler!(transactions::get_transaction)),
    ("requestAirdrop", handler!(transactions::request_airdrop)),
    ("sendTransaction", handler!(transactions::send_transaction)),
    ("simulateTransaction", handler!(transactions::simulate_transaction)),
    // deprecated: agave `Deprecated`: old names still called by older clients
    ("getRecentBlockhash", handler!(deprecated::get_recent_blockhash)),
    ("getFees", handler!(deprecated::get_recent_blockhash)),
    ("getConfirmedTransaction", handler!(transactions::get_transaction)),
    // dev: localnet only (test/dev): the clock and accounts set by hand
    ("localnet_getClock", handler!(dev::get_clock)),
    ("localnet_advanceClock", handler!(dev::advance_clock)),
    ("localnet_setAccount", handler!(dev::set_account)),
];

/// The handler of `method`; None: not a method of this node (-32601).
pub fn handler(method: &str) -> Option<Handler> {
    METHODS.iter().find(|(name, _)| *name == method).map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_method_name_is_in_the_table_once() {
        let names: Vec<&str> = METHODS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len(), "a method listed twice");
        assert_eq!(names.len(), 37);
        assert!(handler("getLatestBlockhash").is_some());
        assert!(handler("getlatestblockhash").is_none(), "names are case-sensitive");
        assert!(handler("getBlock").is_none());
    }
}
