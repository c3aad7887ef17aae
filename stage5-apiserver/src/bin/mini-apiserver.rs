//! `mini-apiserver`: stage 5's storage and watch cache behind a
//! Kubernetes-compatible HTTP API, for kubectl, kube-client and this workspace's
//! informers. Mirrors `kube-apiserver`'s `cmd/kube-apiserver/app/server.go`
//! (`NewAPIServerCommand` → `Run`), with only the flags that matter for the watch.
//!
//! ```text
//! cargo run -p stage5-apiserver --bin mini-apiserver                       # 127.0.0.1:8080, embedded store
//! cargo run -p stage5-apiserver --bin mini-apiserver -- --no-watch-cache   # every watch is an etcd watch
//! cargo run -p stage5-apiserver --features etcd --bin mini-apiserver -- --etcd http://127.0.0.1:2379
//! cargo run -p stage5-apiserver --features etcd --bin mini-apiserver -- \
//!     --etcd http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379
//! kubectl --server http://127.0.0.1:8080 get pods -w
//! cargo run -p stage5-apiserver --bin mini-apiserver -- --idle-timeout 30s --max-connections 256
//! cargo run -p stage5-apiserver --bin mini-apiserver -- --secure          # HTTPS on 127.0.0.1:6443
//! kubectl --kubeconfig /tmp/mini-apiserver/kubeconfig get pods            # the path it printed
//! cargo run -p stage5-apiserver --bin mini-apiserver -- \
//!     --tls-cert-file apiserver.crt --tls-private-key-file apiserver.key
//! ```
//!
//! SIGINT or SIGTERM shuts it down gracefully: watch streams end, in-flight requests
//! finish, the watch caches stop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use workspace_allocator as _;

use clap::Parser;
use stage5_apiserver::config::{
    DEFAULT_ETCD_COMPACTION_INTERVAL, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES, DEFAULT_READ_HEADER_TIMEOUT, DEFAULT_SECURE_BIND,
};
use stage5_apiserver::secure_serving::{self, CertKey};
use stage5_apiserver::{
    Backend, DEFAULT_BIND, DEFAULT_WATCH_CACHE_CAPACITY, Server, ServerConfig,
};
use stage5_apiserver::{RunningServer, kubeconfig};

/// A Kubernetes-compatible API server over stage 5's etcd3 storage and watch cache.
#[derive(Debug, Parser)]
#[command(name = "mini-apiserver", version, about)]
struct Args {
    /// Address to listen on (`--bind-address` and `--secure-port` upstream).
    /// [default: 127.0.0.1:8080 for plain HTTP, 127.0.0.1:6443 with TLS]
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// Serve HTTPS with this PEM certificate (chain) (kube-apiserver's
    /// `--tls-cert-file`); needs `--tls-private-key-file`.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The PEM private key of `--tls-cert-file` (kube-apiserver's
    /// `--tls-private-key-file`).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// Serve HTTPS with a fresh self-signed certificate for 127.0.0.1, ::1 and
    /// localhost (kube-apiserver's default without `--tls-cert-file`), and write a
    /// kubeconfig that trusts it.
    #[arg(long, conflicts_with = "tls_cert_file")]
    secure: bool,
    /// Where `--secure` writes its kubeconfig (the CA beside it as `ca.crt`).
    /// [default: $TMPDIR/mini-apiserver/kubeconfig]
    #[arg(long, value_name = "FILE", requires = "secure")]
    write_kubeconfig: Option<PathBuf>,
    /// Use real etcd at these client URLs instead of the embedded store, comma
    /// separated (kube-apiserver's `--etcd-servers`): list every member, and
    /// requests fail over when one dies. Needs the `etcd` cargo feature.
    #[arg(long, value_name = "URL,...", value_delimiter = ',')]
    etcd: Vec<String>,
    /// Bearer tokens, one `token,user` a line; without it there is no
    /// authentication.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve every list and watch straight from etcd (`--watch-cache=false`).
    #[arg(long)]
    no_watch_cache: bool,
    /// Events each resource's watch cache keeps.
    #[arg(long, default_value_t = DEFAULT_WATCH_CACHE_CAPACITY)]
    watch_cache_capacity: usize,
    /// From a request's first byte (a new connection's: from the accept), how long
    /// its line and headers may take
    /// (`http.Server.ReadHeaderTimeout`, 32s in apiserver's secure serving; no flag
    /// upstream). A Go-style duration: `32s`, `500ms`, `2m`. [default: 32s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    read_header_timeout: Option<Duration>,
    /// How long a keep-alive connection may wait for its next request
    /// (`http.Server.IdleTimeout`, 90s upstream; no flag upstream). Watches are never
    /// idle. [default: 90s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    /// The largest request line plus headers (`http.Server.MaxHeaderBytes`, 1 MiB
    /// upstream); more is a 431 (414 for the line alone) `Status`.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_HEADER_BYTES)]
    max_header_bytes: usize,
    /// The most connections open at once; the next ones wait to be accepted (no
    /// flag upstream: Go's `netutil.LimitListener`). The default leaves a quarter
    /// of a 1,024 open-file limit for everything else.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = parse_max_connections)]
    max_connections: usize,
    /// How often the store is compacted, to the revision seen one interval
    /// earlier (`--etcd-compaction-interval`, 5m upstream); 0 turns compaction
    /// off. Applies to the embedded store and to etcd. [default: 5m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    etcd_compaction_interval: Option<Duration>,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage5_apiserver=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

fn main() -> ExitCode {
    // The workspace's runtime: workers hand freed memory back when they go idle.
    match workspace_allocator::runtime() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(error) => {
            eprintln!("mini-apiserver: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&args.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();

    let etcd: Vec<String> = args
        .etcd
        .iter()
        .map(|url| url.trim())
        .filter(|url| !url.is_empty())
        .map(str::to_string)
        .collect();
    if !args.etcd.is_empty() && etcd.is_empty() {
        eprintln!(
            "mini-apiserver: --etcd needs at least one URL, like http://127.0.0.1:2379"
        );
        return ExitCode::from(2);
    }
    if !etcd.is_empty() && !cfg!(feature = "etcd") {
        eprintln!(
            "mini-apiserver: --etcd needs real etcd support, which this binary was built without.\n\
             Rebuild with `cargo run -p stage5-apiserver --features etcd --bin mini-apiserver -- --etcd URL`\n\
             (needs `protoc`), or leave --etcd out to use the embedded store."
        );
        return ExitCode::from(2);
    }
    let (tls, generated) = match serving_cert(&args) {
        Ok(tls) => tls,
        Err(error) => {
            eprintln!("mini-apiserver: {error}");
            return ExitCode::FAILURE;
        }
    };
    let default_bind = if tls.is_some() {
        DEFAULT_SECURE_BIND
    } else {
        DEFAULT_BIND
    };
    let bind = args.bind.unwrap_or_else(|| {
        default_bind
            .parse()
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)))
    });
    // The kubeconfig's credential: the token file's first token.
    let config_token = args.token_file.as_deref().and_then(first_token);
    let config = ServerConfig {
        bind,
        tls,
        backend: if etcd.is_empty() {
            Backend::Embedded
        } else {
            Backend::Etcd(etcd)
        },
        token_file: args.token_file,
        watch_cache: !args.no_watch_cache,
        watch_cache_capacity: args.watch_cache_capacity,
        read_header_timeout: args
            .read_header_timeout
            .unwrap_or(DEFAULT_READ_HEADER_TIMEOUT),
        idle_timeout: args.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        max_header_bytes: args.max_header_bytes,
        max_connections: args.max_connections,
        etcd_compaction_interval: args
            .etcd_compaction_interval
            .unwrap_or(DEFAULT_ETCD_COMPACTION_INTERVAL),
        ..ServerConfig::default()
    };
    let server = match Server::start(config).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mini-apiserver: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("mini-apiserver serving on {}", server.url());
    match generated {
        Some(ca_pem) => {
            let path = args
                .write_kubeconfig
                .unwrap_or_else(kubeconfig::default_kubeconfig_path);
            let url = client_url(&server);
            let token = config_token.as_deref();
            match kubeconfig::write_kubeconfig(&path, &url, &ca_pem, token) {
                Ok(ca_file) => {
                    println!("  kubeconfig: {}", path.display());
                    println!(
                        "  kubectl --kubeconfig {} get pods -A",
                        path.display()
                    );
                    println!(
                        "  watch-fanout --server {url} --certificate-authority {}",
                        ca_file.display()
                    );
                }
                Err(error) => {
                    eprintln!(
                        "mini-apiserver: cannot write the kubeconfig {}: {error}",
                        path.display()
                    );
                    server.shutdown().await;
                    return ExitCode::FAILURE;
                }
            }
        }
        None => println!("  kubectl --server {} get pods -A", server.url()),
    }
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    ExitCode::SUCCESS
}

/// The serving certificate: `--tls-cert-file` and `--tls-private-key-file`, or
/// `--secure`'s generated one (with its CA, for the kubeconfig), or none.
fn serving_cert(
    args: &Args,
) -> Result<(Option<CertKey>, Option<String>), stage5_apiserver::ServerError> {
    if let (Some(cert), Some(key)) =
        (&args.tls_cert_file, &args.tls_private_key_file)
    {
        return Ok((Some(CertKey::read(cert, key)?), None));
    }
    if args.secure {
        let bind = args
            .bind
            .map_or(std::net::IpAddr::from([127, 0, 0, 1]), |bind| bind.ip());
        let generated = secure_serving::self_signed_for(bind)?;
        return Ok((Some(generated.serving), Some(generated.ca_pem)));
    }
    Ok((None, None))
}

/// The first token of a `--token-file` (one `token,user` a line, `#` comments).
fn first_token(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .and_then(|line| line.split(',').next())
        .map(|token| token.trim().to_owned())
}

/// The URL clients use: the server's, with loopback for an unspecified bind
/// address (the certificate names loopback, not `0.0.0.0`).
fn client_url(server: &RunningServer) -> String {
    let addr = server.local_addr();
    if addr.ip().is_unspecified() {
        let loopback: std::net::IpAddr = if addr.is_ipv4() {
            [127, 0, 0, 1].into()
        } else {
            [0u16, 0, 0, 0, 0, 0, 0, 1].into()
        };
        format!("https://{}", SocketAddr::new(loopback, addr.port()))
    } else {
        server.url()
    }
}

/// A duration as Go's `time.ParseDuration` writes the simple ones: a whole number
/// with `ms`, `s`, `m` or `h` (`32s`, `500ms`, `2m`); a bare number is seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| {
        format!("{text:?} is not a duration: expected a whole number and a unit, like 32s")
    })?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "" | "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number * 60)),
        "h" => Ok(Duration::from_secs(number * 3600)),
        _ => Err(format!(
            "{text:?} has an unknown unit {unit:?}: use ms, s, m or h (like 32s)"
        )),
    }
}

/// A connection cap: a whole number, at least 1.
fn parse_max_connections(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(cap) if cap >= 1 => Ok(cap),
        _ => Err(format!(
            "{text:?} is not a connection cap: use a whole number >= 1"
        )),
    }
}

/// SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(
            tokio::signal::unix::SignalKind::terminate(),
        ) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
