//! What `mini-scheduler` and `hollow-node` share: where the API server is, the
//! duration flags, and the signals that stop them.

use std::path::PathBuf;
use std::time::Duration;

/// `--server URL` (plain HTTP, no auth: stage 5's server), else
/// `--kubeconfig FILE`, else the usual kubeconfig (`$KUBECONFIG`,
/// `~/.kube/config`) or the in-cluster config. kube's own retries are off, as
/// stage 3's `KubeListerWatcher::client` turns them off, so that 429 and 504
/// reach the informers' backoff.
pub async fn client(
    server: Option<&str>,
    kubeconfig: Option<&PathBuf>,
) -> Result<kube::Client, String> {
    let mut config = match (server, kubeconfig) {
        (Some(url), _) => kube::Config::new(
            url.parse()
                .map_err(|e| format!("--server {url:?} is not a URL: {e}"))?,
        ),
        (None, Some(path)) => {
            let file = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                format!("cannot read --kubeconfig {}: {e}", path.display())
            })?;
            kube::Config::from_custom_kubeconfig(
                file,
                &kube::config::KubeConfigOptions::default(),
            )
            .await
            .map_err(|e| {
                format!("cannot use --kubeconfig {}: {e}", path.display())
            })?
        }
        (None, None) => kube::Config::infer().await.map_err(|e| {
            format!(
                "no --server, and no kubeconfig or in-cluster config to infer: {e}"
            )
        })?,
    };
    config.default_retry = false;
    kube::Client::try_from(config).map_err(|e| format!("cannot build a client: {e}"))
}

/// A duration as Go's `time.ParseDuration` writes the simple ones: a whole
/// number with `ms`, `s`, `m` or `h` (`10s`, `500ms`, `5m`); a bare number is
/// seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| {
        format!("{text:?} is not a duration: expected a whole number and a unit, like 10s")
    })?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "" | "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number * 60)),
        "h" => Ok(Duration::from_secs(number * 3600)),
        _ => Err(format!(
            "{text:?} has an unknown unit {unit:?}: use ms, s, m or h (like 10s)"
        )),
    }
}

/// Logs to stderr with `filter` (as `RUST_LOG`).
pub fn init_tracing(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
}

/// SIGINT (Ctrl-C) or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_parse_duration() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("1.5s").is_err());
        assert!(parse_duration("10d").is_err());
        assert!(parse_duration("").is_err());
    }
}
