//! bazaar-localnet: a Solana JSON-RPC (HTTP, port P) + PubSub (websocket, port P+1) server over
//! solana-program-test, with the Bazaar escrow program registered natively at `escrow::ID` and
//! the SPL Token, Token-2022 and Associated Token programs at their usual ids.
//!
//! Transactions are executed synchronously when sent and are reported as `finalized` at once.
//! Dev-only methods: `localnet_getClock` -> {slot, unix_timestamp},
//! `localnet_advanceClock` [seconds] -> new clock.

mod chain;
mod ledger;
mod native;
mod pubsub;
mod record;
mod rpc;
mod tokens;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{body::Incoming, Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

use chain::{Cmd, Note, Notifiers, SigNote};
use rpc::*;

#[derive(Parser, Debug)]
#[command(name = "bazaar-localnet", about = "Solana JSON-RPC localnet over solana-program-test with the Bazaar escrow program")]
struct Args {
    /// HTTP JSON-RPC port; the websocket (PubSub) server listens on port + 1.
    #[arg(long, env = "BAZAAR_LOCALNET_PORT", default_value_t = 8899)]
    port: u16,
    /// Address to bind both servers to.
    #[arg(long, env = "BAZAAR_LOCALNET_BIND", default_value = "127.0.0.1")]
    bind: String,
    /// Ledger directory: every state change (accounts, transaction history, clock) is appended
    /// to <dir>/wal.log and fsynced before it is reported, compacted into <dir>/snapshot.json,
    /// and recovered at start (see README "Ledger"). Without it, state lives in memory only.
    #[arg(long, env = "BAZAAR_LOCALNET_LEDGER")]
    ledger: Option<std::path::PathBuf>,
    /// Upgrade authority recorded in the escrow program's ProgramData account, created at genesis
    /// like solana-test-validator's `--upgradeable-program <id> <so> <authority>`: only this key
    /// can `initialize_config`. Without it there is no ProgramData account (a config already in
    /// the ledger keeps working; a fresh one cannot be created).
    #[arg(long, env = "BAZAAR_LOCALNET_ESCROW_UPGRADE_AUTHORITY")]
    escrow_upgrade_authority: Option<solana_sdk::pubkey::Pubkey>,
    /// Also register the test-only programs natively (never deployed anywhere): the CPI caller
    /// (`programs/tests/cpi-caller`, at `CpiCa11erTest111111111111111111111111111111`), which
    /// forwards its instruction to another program by CPI. For tests; `npm start` never sets it.
    #[arg(long, env = "BAZAAR_LOCALNET_TEST_PROGRAMS")]
    test_programs: bool,
}

/// Largest accepted request body (bytes).
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How long an RPC call may wait for the chain thread.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

struct App {
    chain: std::sync::Mutex<std::sync::mpsc::Sender<Cmd>>,
    /// Flips to true on SIGTERM/SIGINT: websocket clients get a normal close (code 1000), so
    /// web3.js does not keep reconnecting to a node that is gone.
    shutdown: tokio::sync::watch::Receiver<bool>,
    notify: Notifiers,
    next_sub: AtomicU64,
}

impl App {
    fn send(&self, cmd: Cmd) -> Result<(), RpcError> {
        self.chain
            .lock()
            .map_err(|_| RpcError::internal("chain lock poisoned"))?
            .send(cmd)
            .map_err(|_| RpcError::internal("chain thread stopped"))
    }

    async fn call(&self, method: String, params: Vec<Value>) -> RpcResult {
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.send(Cmd::Rpc { method, params, reply })?;
        match tokio::time::timeout(CALL_TIMEOUT, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(RpcError::internal("chain thread dropped the request")),
            Err(_) => Err(RpcError::internal("timed out waiting for the chain")),
        }
    }

    async fn status(&self, signature: solana_sdk::signature::Signature) -> Option<SigNote> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.send(Cmd::Status { signature, reply }).ok()?;
        rx.await.ok().flatten()
    }

    /// Handle one JSON-RPC request object; None for notifications (no id).
    async fn handle_one(&self, req: Value) -> Value {
        let Value::Object(obj) = req else {
            return response(Value::Null, Err(RpcError::new(INVALID_REQUEST, "Invalid request")));
        };
        let id = obj.get("id").cloned().unwrap_or(Value::Null);
        let Some(method) = obj.get("method").and_then(Value::as_str) else {
            return response(id, Err(RpcError::new(INVALID_REQUEST, "Invalid request")));
        };
        let params = match obj.get("params") {
            None | Some(Value::Null) => vec![],
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return response(id, Err(RpcError::invalid_params("Invalid params: params must be an array"))),
        };
        response(id, self.call(method.to_string(), params).await)
    }

    async fn handle_body(&self, body: &[u8]) -> Value {
        let parsed: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(_) => return response(Value::Null, Err(RpcError::new(PARSE_ERROR, "Parse error"))),
        };
        match parsed {
            Value::Array(reqs) if reqs.is_empty() => {
                response(Value::Null, Err(RpcError::new(INVALID_REQUEST, "Invalid request")))
            }
            Value::Array(reqs) => {
                let mut out = Vec::with_capacity(reqs.len());
                for r in reqs {
                    out.push(self.handle_one(r).await);
                }
                Value::Array(out)
            }
            other => self.handle_one(other).await,
        }
    }
}

fn json_response(status: StatusCode, body: Vec<u8>, content_type: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .header("access-control-allow-origin", "*")
        .header("access-control-allow-methods", "POST, GET, OPTIONS")
        .header("access-control-allow-headers", "content-type, solana-client")
        .body(Full::new(Bytes::from(body)))
        .expect("valid response")
}

async fn http_handler(req: Request<Incoming>, app: Arc<App>) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() == Method::OPTIONS {
        return Ok(json_response(StatusCode::NO_CONTENT, vec![], "text/plain"));
    }
    if req.method() == Method::GET {
        return Ok(match req.uri().path() {
            "/health" => json_response(StatusCode::OK, b"ok".to_vec(), "text/plain"),
            _ => json_response(StatusCode::METHOD_NOT_ALLOWED, b"Used HTTP Method is not allowed. POST or OPTIONS is required".to_vec(), "text/plain"),
        });
    }
    if req.method() != Method::POST {
        return Ok(json_response(StatusCode::METHOD_NOT_ALLOWED, vec![], "text/plain"));
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            let v = response(Value::Null, Err(RpcError::new(INVALID_REQUEST, "Request body too large or unreadable")));
            return Ok(json_response(StatusCode::PAYLOAD_TOO_LARGE, v.to_string().into_bytes(), "application/json"));
        }
    };
    let fut = std::panic::AssertUnwindSafe(app.handle_body(&body));
    let v = match futures::FutureExt::catch_unwind(fut).await {
        Ok(v) => v,
        Err(_) => response(Value::Null, Err(RpcError::internal("panic while handling the request"))),
    };
    Ok(json_response(StatusCode::OK, v.to_string().into_bytes(), "application/json"))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // program-test installs a logger that prints every instruction at debug level unless
    // RUST_LOG says otherwise; keep the node quiet by default (still single-threaded here).
    if std::env::var_os("RUST_LOG").is_none() {
        std::env::set_var("RUST_LOG", "error");
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let ws_port = args
        .port
        .checked_add(1)
        .ok_or_else(|| anyhow::anyhow!("--port must be below 65535 (the websocket uses port + 1)"))?;
    let http_addr: SocketAddr = format!("{}:{}", args.bind, args.port).parse()?;
    let ws_addr: SocketAddr = format!("{}:{}", args.bind, ws_port).parse()?;
    let http_listener = TcpListener::bind(http_addr).await?;
    let ws_listener = TcpListener::bind(ws_addr).await?;

    let notify = Notifiers {
        notes: tokio::sync::broadcast::channel::<Note>(pubsub::NOTE_BUFFER).0,
        slots: tokio::sync::watch::channel(0u64).0,
    };
    #[allow(unused_mut)]
    let mut genesis = vec![];
    #[cfg(feature = "escrow")]
    if let Some(authority) = args.escrow_upgrade_authority {
        genesis.push(native::escrow_program_data(authority));
    }
    let sender = tokio::task::spawn_blocking({
        let notify = notify.clone();
        let ledger = args.ledger.clone();
        let test_programs = args.test_programs;
        move || chain::spawn_actor(notify, ledger, genesis, test_programs)
    })
    .await??;
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let app = Arc::new(App {
        chain: std::sync::Mutex::new(sender),
        shutdown: shutdown_rx,
        notify,
        next_sub: AtomicU64::new(1),
    });

    let ws_app = app.clone();
    tokio::spawn(async move {
        loop {
            if let Ok((stream, _)) = ws_listener.accept().await {
                tokio::spawn(pubsub::ws_connection(stream, ws_app.clone()));
            }
        }
    });

    println!("bazaar-localnet listening on http://{http_addr}");
    println!("bazaar-localnet websocket on ws://{ws_addr}");

    let shutdown = async {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal handler");
            tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
        }
        #[cfg(not(unix))]
        {
            let _ = ctrl_c.await;
        }
    };
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = http_listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let app = app.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| http_handler(req, app.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        }
    }
    let _ = shutdown_tx.send(true);
    if args.ledger.is_some() {
        let (reply, rx) = tokio::sync::oneshot::channel();
        if app.send(Cmd::Persist { reply }).is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(10), rx).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The chain thread holds program-test state; exit without tearing it down.
    std::process::exit(0);
}
