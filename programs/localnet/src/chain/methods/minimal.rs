//! agave `Minimal`: health, version, identity, genesis hash, slot, block height, epoch, transaction
//! count, balance.

use serde_json::json;
use solana_sdk::signature::Signer;

use crate::chain::{Chain, SOLANA_CORE_VERSION};
use crate::rpc::{Params, RpcResult};

/// `getHealth`.
pub async fn get_health(_: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!("ok"))
}

/// `getVersion`.
pub async fn get_version(_: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!({"solana-core": SOLANA_CORE_VERSION, "feature-set": 0}))
}

/// `getGenesisHash`.
pub async fn get_genesis_hash(c: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!(c.genesis_hash.to_string()))
}

/// `getIdentity`.
pub async fn get_identity(c: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!({"identity": c.faucet.pubkey().to_string()}))
}

/// `getSlot`.
pub async fn get_slot(c: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!(c.clock.slot))
}

/// `getBlockHeight`.
pub async fn get_block_height(c: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!(c.height))
}

/// `getTransactionCount`.
pub async fn get_transaction_count(c: &mut Chain, _: Params<'_>) -> RpcResult {
    Ok(json!(c.tx_count))
}

/// `getEpochInfo`.
pub async fn get_epoch_info(c: &mut Chain, _: Params<'_>) -> RpcResult {
    let slot = c.clock.slot;
    let schedule = &c.ctx.genesis_config().epoch_schedule;
    let (epoch, slot_index) = schedule.get_epoch_and_slot_index(slot);
    let slots_in_epoch = schedule.get_slots_in_epoch(epoch);
    Ok(json!({
        "absoluteSlot": slot,
        "blockHeight": c.height,
        "epoch": epoch,
        "slotIndex": slot_index,
        "slotsInEpoch": slots_in_epoch,
        "transactionCount": c.tx_count,
    }))
}

/// `getBalance`.
pub async fn get_balance(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let key = p.pubkey(0)?;
    let bal = c.account(&key).await?.map_or(0, |a| a.lamports);
    c.ctx_json(json!(bal)).await
}
