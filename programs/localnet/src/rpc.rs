//! JSON-RPC 2.0 envelope helpers and error codes (the ones the Solana RPC and web3.js use).

use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Preflight simulation failed; `data` carries {err, logs, ...}.
pub const SEND_TRANSACTION_PREFLIGHT_FAILURE: i64 = -32002;
pub const TRANSACTION_SIGNATURE_VERIFICATION_FAILURE: i64 = -32003;

#[derive(Debug, Clone)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(INTERNAL_ERROR, format!("Internal error: {message}"))
    }
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    pub fn to_json(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }
}

pub type RpcResult = Result<Value, RpcError>;

pub fn response(id: Value, result: RpcResult) -> Value {
    match result {
        Ok(v) => json!({"jsonrpc": "2.0", "result": v, "id": id}),
        Err(e) => json!({"jsonrpc": "2.0", "error": e.to_json(), "id": id}),
    }
}

/// Parameter access helpers over the `params` array.
pub struct Params<'a>(pub &'a [Value]);

impl<'a> Params<'a> {
    pub fn get(&self, i: usize) -> Option<&'a Value> {
        self.0.get(i).filter(|v| !v.is_null())
    }
    pub fn str(&self, i: usize, what: &str) -> Result<&'a str, RpcError> {
        self.get(i)
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params(format!("Invalid params: expected {what} at position {i}")))
    }
    pub fn u64(&self, i: usize, what: &str) -> Result<u64, RpcError> {
        self.get(i)
            .and_then(Value::as_u64)
            .ok_or_else(|| RpcError::invalid_params(format!("Invalid params: expected {what} (unsigned integer) at position {i}")))
    }
    pub fn pubkey(&self, i: usize) -> Result<solana_sdk::pubkey::Pubkey, RpcError> {
        parse_pubkey(self.str(i, "a base58 public key")?)
    }
    /// The config object at position i (empty when absent).
    pub fn config(&self, i: usize) -> Result<Map<String, Value>, RpcError> {
        match self.get(i) {
            None => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(_) => Err(RpcError::invalid_params(format!("Invalid params: expected a config object at position {i}"))),
        }
    }
}

pub fn parse_pubkey(s: &str) -> Result<solana_sdk::pubkey::Pubkey, RpcError> {
    s.parse().map_err(|_| RpcError::invalid_params(format!("Invalid param: Invalid public key: {s}")))
}

pub fn parse_signature(s: &str) -> Result<solana_sdk::signature::Signature, RpcError> {
    s.parse().map_err(|_| RpcError::invalid_params(format!("Invalid param: Invalid signature: {s}")))
}

pub fn cfg_str<'a>(cfg: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    cfg.get(key).and_then(Value::as_str)
}

pub fn cfg_bool(cfg: &Map<String, Value>, key: &str) -> bool {
    cfg.get(key).and_then(Value::as_bool).unwrap_or(false)
}
