use anchor_lang::prelude::*;

/// Seed of the singleton config PDA: `["config"]`.
#[constant]
pub const CONFIG_SEED: &[u8] = b"config";

/// Seed prefix of an order PDA: `["order", order_id (16 bytes)]`.
#[constant]
pub const ORDER_SEED: &[u8] = b"order";

/// Highest platform fee the config accepts (10%).
#[constant]
pub const MAX_FEE_BPS: u16 = 1_000;

/// 100% in basis points.
#[constant]
pub const BPS_DENOMINATOR: u16 = 10_000;

/// Longest allow-list of payment mints.
#[constant]
pub const MAX_ALLOWED_MINTS: u8 = 8;
