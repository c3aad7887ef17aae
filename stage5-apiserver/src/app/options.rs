//! The API server's command line: mirrors `cmd/kube-apiserver/app/options`
//! (`ServerRunOptions`, `Complete`, `Validate`), as clap arguments that
//! `mini-apiserver` and `mini-cluster` both flatten into theirs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::config::{
    DEFAULT_ETCD_COMPACTION_INTERVAL, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_HEADER_BYTES, DEFAULT_READ_HEADER_TIMEOUT, DEFAULT_SECURE_BIND,
};
use crate::secure_serving::{self, CertKey};
use crate::{Backend, DEFAULT_BIND, DEFAULT_WATCH_CACHE_CAPACITY, ServerConfig};

/// The API server's flags (`ServerRunOptions`), shared by `mini-apiserver` and
/// `mini-cluster`.
#[derive(Clone, Debug, Args)]
pub struct ServerRunOptions {
    /// Address to listen on (`--bind-address` and `--secure-port` upstream).
    /// [default: 127.0.0.1:8080 for plain HTTP, 127.0.0.1:6443 with TLS]
    #[arg(long)]
    pub bind: Option<SocketAddr>,
    /// Serve HTTPS with this PEM certificate (chain) (kube-apiserver's
    /// `--tls-cert-file`); needs `--tls-private-key-file`.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// The PEM private key of `--tls-cert-file` (kube-apiserver's
    /// `--tls-private-key-file`).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Serve HTTPS with a fresh self-signed certificate for 127.0.0.1, ::1 and
    /// localhost (kube-apiserver's default without `--tls-cert-file`), and write a
    /// kubeconfig that trusts it.
    #[arg(long, conflicts_with = "tls_cert_file")]
    pub secure: bool,
    /// Where `--secure` writes its kubeconfig (the CA beside it as `ca.crt`).
    /// [default: $TMPDIR/mini-apiserver/kubeconfig]
    #[arg(long, value_name = "FILE", requires = "secure")]
    pub write_kubeconfig: Option<PathBuf>,
    /// Use real etcd at these client URLs instead of the embedded store, comma
    /// separated (kube-apiserver's `--etcd-servers`): list every member, and
    /// requests fail over when one dies. Needs the `etcd` cargo feature.
    #[arg(long, value_name = "URL,...", value_delimiter = ',')]
    pub etcd: Vec<String>,
    /// Bearer tokens, one `token,user` a line; without it there is no
    /// authentication.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Serve every list and watch straight from etcd (`--watch-cache=false`).
    #[arg(long)]
    pub no_watch_cache: bool,
    /// Events each resource's watch cache keeps.
    #[arg(long, default_value_t = DEFAULT_WATCH_CACHE_CAPACITY)]
    pub watch_cache_capacity: usize,
    /// From a request's first byte (a new connection's: from the accept), how long
    /// its line and headers may take
    /// (`http.Server.ReadHeaderTimeout`, 32s in apiserver's secure serving; no flag
    /// upstream). A Go-style duration: `32s`, `500ms`, `2m`. [default: 32s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub read_header_timeout: Option<Duration>,
    /// How long a keep-alive connection may wait for its next request
    /// (`http.Server.IdleTimeout`, 90s upstream; no flag upstream). Watches are never
    /// idle. [default: 90s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// The largest request line plus headers (`http.Server.MaxHeaderBytes`, 1 MiB
    /// upstream); more is a 431 (414 for the line alone) `Status`.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_HEADER_BYTES)]
    pub max_header_bytes: usize,
    /// A cap on the connections open at once; the next ones wait to be accepted
    /// (no flag upstream: Go's `netutil.LimitListener`). By default there is no
    /// cap, as in kube-apiserver: the open-file limit, raised to its hard limit
    /// at start, is the bound.
    #[arg(long, value_name = "N", value_parser = parse_max_connections)]
    pub max_connections: Option<usize>,
    /// How often the store is compacted, to the revision seen one interval
    /// earlier (`--etcd-compaction-interval`, 5m upstream); 0 turns compaction
    /// off. Applies to the embedded store and to etcd. [default: 5m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub etcd_compaction_interval: Option<Duration>,
}

/// The options made whole (`completedServerRunOptions`): the server's config, and
/// what a client needs to trust and reach it.
#[derive(Debug)]
pub struct CompletedOptions {
    /// What [`Server::start`](crate::Server::start) takes.
    pub config: ServerConfig,
    /// With `--secure`: the PEM of the generated certificate's CA.
    pub generated_ca_pem: Option<String>,
    /// The first token of `--token-file`, for a kubeconfig.
    pub token: Option<String>,
}

impl ServerRunOptions {
    /// Mirrors `Complete` and `Validate`: the server config these flags ask for,
    /// or what is wrong with them.
    pub fn complete(&self) -> Result<CompletedOptions, String> {
        let etcd: Vec<String> = self
            .etcd
            .iter()
            .map(|url| url.trim())
            .filter(|url| !url.is_empty())
            .map(str::to_string)
            .collect();
        if !self.etcd.is_empty() && etcd.is_empty() {
            return Err(
                "--etcd needs at least one URL, like http://127.0.0.1:2379".into()
            );
        }
        if !etcd.is_empty() && !cfg!(feature = "etcd") {
            return Err(
                "--etcd needs real etcd support, which this binary was built without.\n\
                 Rebuild with `--features etcd` (needs `protoc`), or leave --etcd out \
                 to use the embedded store."
                    .into(),
            );
        }
        let (tls, generated_ca_pem) =
            self.serving_cert().map_err(|e| e.to_string())?;
        let default_bind = if tls.is_some() {
            DEFAULT_SECURE_BIND
        } else {
            DEFAULT_BIND
        };
        let bind = self.bind.unwrap_or_else(|| {
            default_bind
                .parse()
                .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)))
        });
        let config = ServerConfig {
            bind,
            tls,
            backend: if etcd.is_empty() {
                Backend::Embedded
            } else {
                Backend::Etcd(etcd)
            },
            token_file: self.token_file.clone(),
            watch_cache: !self.no_watch_cache,
            watch_cache_capacity: self.watch_cache_capacity,
            read_header_timeout: self
                .read_header_timeout
                .unwrap_or(DEFAULT_READ_HEADER_TIMEOUT),
            idle_timeout: self.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
            max_header_bytes: self.max_header_bytes,
            max_connections: self.max_connections,
            etcd_compaction_interval: self
                .etcd_compaction_interval
                .unwrap_or(DEFAULT_ETCD_COMPACTION_INTERVAL),
            ..ServerConfig::default()
        };
        Ok(CompletedOptions {
            config,
            generated_ca_pem,
            token: self.token_file.as_deref().and_then(first_token),
        })
    }

    /// The serving certificate: `--tls-cert-file` and `--tls-private-key-file`,
    /// or `--secure`'s generated one (with its CA, for the kubeconfig), or none.
    fn serving_cert(
        &self,
    ) -> Result<(Option<CertKey>, Option<String>), crate::ServerError> {
        if let (Some(cert), Some(key)) =
            (&self.tls_cert_file, &self.tls_private_key_file)
        {
            return Ok((Some(CertKey::read(cert, key)?), None));
        }
        if self.secure {
            let bind = self
                .bind
                .map_or(std::net::IpAddr::from([127, 0, 0, 1]), |bind| bind.ip());
            let generated = secure_serving::self_signed_for(bind)?;
            return Ok((Some(generated.serving), Some(generated.ca_pem)));
        }
        Ok((None, None))
    }
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

/// Go's `time.ParseDuration` for the flags, as apimachinery's helper reads it.
pub use apimachinery::util::duration::parse_duration;

/// A connection cap: a whole number, at least 1.
fn parse_max_connections(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(cap) if cap >= 1 => Ok(cap),
        _ => Err(format!(
            "{text:?} is not a connection cap: use a whole number >= 1"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_reads_them() {
        assert_eq!(parse_duration("32s"), Ok(Duration::from_secs(32)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(43_200)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(
            parse_duration("3d")
                .unwrap_err()
                .contains("unknown unit \"d\"")
        );
        assert!(parse_duration("").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn etcd_needs_a_url() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            server: ServerRunOptions,
        }
        let cli =
            Cli::try_parse_from(["mini-apiserver", "--etcd", ","]).expect("parses");
        assert_eq!(
            cli.server.complete().unwrap_err(),
            "--etcd needs at least one URL, like http://127.0.0.1:2379"
        );
        let cli = Cli::try_parse_from(["mini-apiserver"]).expect("parses");
        let completed = cli.server.complete().expect("completes");
        assert_eq!(
            completed.config.bind,
            "127.0.0.1:8080".parse::<SocketAddr>().unwrap()
        );
        assert!(matches!(completed.config.backend, Backend::Embedded));
    }
}
