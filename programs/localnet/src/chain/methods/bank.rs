//! agave `BankData` and the bank reads of `Full`: epoch schedule, rent, blockhashes (latest, valid),
//! message fees, prioritization fees, block time, first available block.

use base64::Engine as _;
use serde_json::json;
use solana_sdk::{hash::Hash, message::VersionedMessage};

use crate::chain::{bc, Chain, B64};
use crate::rpc::{Params, RpcError, RpcResult};

/// `getEpochSchedule`.
pub async fn get_epoch_schedule(c: &mut Chain, _: Params<'_>) -> RpcResult {
    let s = &c.ctx.genesis_config().epoch_schedule;
    Ok(json!({
        "slotsPerEpoch": s.slots_per_epoch,
        "leaderScheduleSlotOffset": s.leader_schedule_slot_offset,
        "warmup": s.warmup,
        "firstNormalEpoch": s.first_normal_epoch,
        "firstNormalSlot": s.first_normal_slot,
    }))
}

/// `getMinimumBalanceForRentExemption`.
pub async fn get_minimum_balance_for_rent_exemption(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let size = p.u64(0, "data length")?;
    if size > 10 * 1024 * 1024 {
        return Err(RpcError::invalid_params("Invalid params: data length above 10 MiB (the account size limit)"));
    }
    let rent = c.ctx.banks_client.get_rent().await.map_err(bc)?;
    Ok(json!(rent.minimum_balance(size as usize)))
}

/// `getLatestBlockhash`.
pub async fn get_latest_blockhash(c: &mut Chain, _: Params<'_>) -> RpcResult {
    let (hash, last_valid) = c.latest_blockhash()?;
    c.ctx_json(json!({"blockhash": hash.to_string(), "lastValidBlockHeight": last_valid})).await
}

/// `isBlockhashValid`.
pub async fn is_blockhash_valid(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let hash: Hash = p
        .str(0, "a base58 blockhash")?
        .parse()
        .map_err(|_| RpcError::invalid_params("Invalid params: invalid blockhash"))?;
    let valid = c.is_blockhash_valid(&hash);
    c.ctx_json(json!(valid)).await
}

/// `getFeeForMessage`.
pub async fn get_fee_for_message(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let bytes = B64
        .decode(p.str(0, "a base64 message")?)
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: invalid base64 message: {e}")))?;
    let msg: VersionedMessage = bincode::deserialize(&bytes)
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: invalid message: {e}")))?;
    msg.sanitize().map_err(|e| RpcError::invalid_params(format!("Invalid params: invalid message: {e}")))?;
    let fee = c.fee_for(&msg).await?;
    c.ctx_json(json!(fee)).await
}

/// `getRecentPrioritizationFees`.
pub async fn get_recent_prioritization_fees(_: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!([]))
}

/// `getBlockTime`.
pub async fn get_block_time(c: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!(c.clock.unix_timestamp))
}

/// `getFirstAvailableBlock` / `minimumLedgerSlot`.
pub async fn get_first_available_block(_: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!(0))
}
