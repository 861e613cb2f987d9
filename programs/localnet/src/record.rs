//! What the node records of one committed transaction (`TxRecord`, `Loaded`): what
//! getTransaction answers, kept in memory by the chain and persisted as is (JSON) by the ledger.
//! Its own module so that `chain` (which writes records) and `ledger` (which stores them) both
//! depend on it and not on each other.

use serde_json::Value;
use solana_sdk::{
    message::VersionedMessage,
    pubkey::Pubkey,
    transaction::{TransactionError, VersionedTransaction},
};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Everything getTransaction answers about one committed transaction; persisted as is (JSON) in
/// the ledger's log and snapshot. Balances in lamports, `block_time` in unix seconds.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct TxRecord {
    pub(crate) slot: u64,
    pub(crate) block_time: i64,
    /// The wire (bincode) transaction, base64 in JSON.
    #[serde(with = "tx_base64")]
    pub(crate) tx: VersionedTransaction,
    pub(crate) err: Option<TransactionError>,
    pub(crate) fee: u64,
    pub(crate) pre_balances: Vec<u64>,
    pub(crate) post_balances: Vec<u64>,
    pub(crate) pre_token_balances: Vec<Value>,
    pub(crate) post_token_balances: Vec<Value>,
    pub(crate) logs: Vec<String>,
    pub(crate) units: u64,
    pub(crate) return_data: Option<Value>,
    pub(crate) inner_instructions: Value,
    /// Addresses the message loaded from address lookup tables, resolved when it ran (absent in
    /// records of older nodes, which had none).
    #[serde(default)]
    pub(crate) loaded: Loaded,
}

/// Addresses a version 0 message loaded from lookup tables (`meta.loadedAddresses`): after the
/// static keys, writable ones first, in the order of the message's lookups.
#[derive(serde::Serialize, serde::Deserialize, Clone, Default, Debug)]
pub struct Loaded {
    pub(crate) writable: Vec<String>,
    pub(crate) readonly: Vec<String>,
}

impl Loaded {
    /// Every account key of the transaction: static keys, then loaded writable, then loaded readonly
    /// (the indexes instructions, inner instructions and token balances refer to).
    pub(crate) fn all_keys(&self, msg: &VersionedMessage) -> Vec<Pubkey> {
        let mut keys: Vec<Pubkey> = msg.static_account_keys().to_vec();
        keys.extend(self.writable.iter().chain(&self.readonly).filter_map(|k| k.parse::<Pubkey>().ok()));
        keys
    }
}

/// serde for a transaction as base64 of its wire form.
mod tx_base64 {
    use base64::Engine as _;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};
    use solana_sdk::transaction::VersionedTransaction;

    pub fn serialize<S: Serializer>(tx: &VersionedTransaction, s: S) -> Result<S::Ok, S::Error> {
        let bytes = bincode::serialize(tx).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&super::B64.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<VersionedTransaction, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = super::B64.decode(text).map_err(D::Error::custom)?;
        bincode::deserialize(&bytes).map_err(D::Error::custom)
    }
}
