//! agave `Deprecated`: names older clients still call (web3.js < 1.40: getRecentBlockhash, getFees;
//! getConfirmedTransaction is `transactions::get_transaction`).

use serde_json::json;

use crate::chain::Chain;
use crate::rpc::{Params, RpcResult};

/// Deprecated (web3.js < 1.40 and some older tools still call them).
/// `getRecentBlockhash` / `getFees`.
pub async fn get_recent_blockhash(c: &mut Chain, _: Params<'_>) -> RpcResult {
    let (hash, last_valid) = c.latest_blockhash()?;
    c.ctx_json(json!({
        "blockhash": hash.to_string(),
        "feeCalculator": {"lamportsPerSignature": 5000},
        // Every slot has a block here, so slots and heights move together.
        "lastValidSlot": c.clock.slot + (last_valid - c.height),
        "lastValidBlockHeight": last_valid,
    }))
    .await
}
