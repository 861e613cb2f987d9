//! Minimal SPL Token / Token-2022 account decoding: just the fixed base layout
//! (165-byte token account, 82-byte mint) that balances and jsonParsed need.

use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;

pub const TOKEN_PROGRAM: Pubkey = solana_sdk::pubkey!("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022_PROGRAM: Pubkey =
    solana_sdk::pubkey!("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

const ACCOUNT_LEN: usize = 165;
const MINT_LEN: usize = 82;
/// Token-2022 puts an AccountType byte right after the 165-byte base layout.
const ACCOUNT_TYPE_MINT: u8 = 1;
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;

pub fn is_token_program(owner: &Pubkey) -> bool {
    *owner == TOKEN_PROGRAM || *owner == TOKEN_2022_PROGRAM
}

pub fn program_name(owner: &Pubkey) -> &'static str {
    if *owner == TOKEN_2022_PROGRAM {
        "spl-token-2022"
    } else {
        "spl-token"
    }
}

/// Fields of a token account that callers need.
pub struct TokenAccount {
    pub mint: Pubkey,
    pub owner: Pubkey,
    pub amount: u64,
    pub delegate: Option<Pubkey>,
    pub state: u8,
    pub is_native: bool,
    pub delegated_amount: u64,
}

pub struct Mint {
    pub mint_authority: Option<Pubkey>,
    pub supply: u64,
    pub decimals: u8,
    pub is_initialized: bool,
    pub freeze_authority: Option<Pubkey>,
}

fn key(data: &[u8], at: usize) -> Pubkey {
    Pubkey::new_from_array(data[at..at + 32].try_into().unwrap())
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap())
}

fn coption_key(data: &[u8], at: usize) -> Option<Pubkey> {
    (data[at..at + 4] == [1, 0, 0, 0]).then(|| key(data, at + 4))
}

pub fn parse_token_account(owner_program: &Pubkey, data: &[u8]) -> Option<TokenAccount> {
    if !is_token_program(owner_program) || data.len() < ACCOUNT_LEN {
        return None;
    }
    if data.len() > ACCOUNT_LEN && data[ACCOUNT_LEN] != ACCOUNT_TYPE_ACCOUNT {
        return None;
    }
    if data.len() == ACCOUNT_LEN || *owner_program == TOKEN_2022_PROGRAM || data.len() > ACCOUNT_LEN {
        let state = data[108];
        if state == 0 {
            return None;
        }
        return Some(TokenAccount {
            mint: key(data, 0),
            owner: key(data, 32),
            amount: u64_at(data, 64),
            delegate: coption_key(data, 72),
            state,
            is_native: data[109..113] == [1, 0, 0, 0],
            delegated_amount: u64_at(data, 121),
        });
    }
    None
}

pub fn parse_mint(owner_program: &Pubkey, data: &[u8]) -> Option<Mint> {
    if !is_token_program(owner_program) || data.len() < MINT_LEN {
        return None;
    }
    let plain = data.len() == MINT_LEN;
    let ext = data.len() > ACCOUNT_LEN && data[ACCOUNT_LEN] == ACCOUNT_TYPE_MINT;
    if !(plain || ext) {
        return None;
    }
    Some(Mint {
        mint_authority: coption_key(data, 0),
        supply: u64_at(data, 36),
        decimals: data[44],
        is_initialized: data[45] == 1,
        freeze_authority: coption_key(data, 46),
    })
}

/// "1.5" style decimal string of `amount / 10^decimals`, trailing zeros trimmed.
pub fn ui_amount_string(amount: u64, decimals: u8) -> String {
    if decimals == 0 {
        return amount.to_string();
    }
    let s = format!("{:0>width$}", amount, width = decimals as usize + 1);
    let (int, frac) = s.split_at(s.len() - decimals as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// web3.js `TokenAmount`: {amount, decimals, uiAmount, uiAmountString}.
pub fn token_amount_json(amount: u64, decimals: u8) -> Value {
    let ui = ui_amount_string(amount, decimals);
    json!({
        "amount": amount.to_string(),
        "decimals": decimals,
        "uiAmount": ui.parse::<f64>().ok(),
        "uiAmountString": ui,
    })
}

/// jsonParsed form of a token account or mint; None when not a token account/mint
/// (the caller then falls back to base64, like the real RPC does).
pub fn parsed_json(owner_program: &Pubkey, data: &[u8], mint_decimals: impl Fn(&Pubkey) -> Option<u8>) -> Option<Value> {
    if let Some(acc) = parse_token_account(owner_program, data) {
        let decimals = mint_decimals(&acc.mint)?;
        let state = match acc.state {
            2 => "frozen",
            _ => "initialized",
        };
        let mut info = json!({
            "isNative": acc.is_native,
            "mint": acc.mint.to_string(),
            "owner": acc.owner.to_string(),
            "state": state,
            "tokenAmount": token_amount_json(acc.amount, decimals),
        });
        if let Some(d) = acc.delegate {
            info["delegate"] = json!(d.to_string());
            info["delegatedAmount"] = token_amount_json(acc.delegated_amount, decimals);
        }
        return Some(json!({
            "program": program_name(owner_program),
            "parsed": {"type": "account", "info": info},
            "space": data.len(),
        }));
    }
    if let Some(m) = parse_mint(owner_program, data) {
        return Some(json!({
            "program": program_name(owner_program),
            "parsed": {"type": "mint", "info": {
                "decimals": m.decimals,
                "freezeAuthority": m.freeze_authority.map(|k| k.to_string()),
                "isInitialized": m.is_initialized,
                "mintAuthority": m.mint_authority.map(|k| k.to_string()),
                "supply": m.supply.to_string(),
            }},
            "space": data.len(),
        }));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ui_amounts() {
        assert_eq!(ui_amount_string(0, 6), "0");
        assert_eq!(ui_amount_string(1_500_000, 6), "1.5");
        assert_eq!(ui_amount_string(1, 6), "0.000001");
        assert_eq!(ui_amount_string(42, 0), "42");
        assert_eq!(ui_amount_string(10_000_000, 6), "10");
    }
}
