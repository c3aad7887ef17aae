//! Starting the API server from its flags: mirrors `cmd/kube-apiserver/app/server.go`
//! (`Run`: complete the options, build the server, serve until the stop signal).
//! `mini-apiserver` is this and nothing else; `mini-cluster` starts it before its
//! controllers.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::options::ServerRunOptions;

/// Prints a line for the user, as `println!` does, except that a closed
/// standard output (a pipe whose reader left) is not a reason to stop a server.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout().lock(), $($arg)*);
    }};
}
use crate::{RunningServer, Server, kubeconfig};

/// A started server, with what a client needs to reach it.
#[derive(Debug)]
pub struct StartedServer {
    /// The server.
    pub server: RunningServer,
    /// The URL clients use (loopback for an unspecified bind address).
    pub url: String,
    /// With `--secure`: the PEM of the CA that signed the serving certificate.
    pub ca_pem: Option<String>,
    /// The first token of `--token-file`.
    pub token: Option<String>,
    /// With `--secure`: the kubeconfig written for kubectl.
    pub kubeconfig: Option<PathBuf>,
}

/// Starts the server `options` describe and prints, as `name`, where it serves
/// and how kubectl reaches it (with `--secure`, after writing a kubeconfig that
/// trusts the generated certificate).
pub async fn start(
    options: &ServerRunOptions,
    name: &str,
) -> Result<StartedServer, String> {
    let completed = options.complete()?;
    let server = Server::start(completed.config)
        .await
        .map_err(|error| error.to_string())?;
    say!("{name} serving on {}", server.url());
    let url = client_url(&server);
    let mut written = None;
    match &completed.generated_ca_pem {
        Some(ca_pem) => {
            let path = options
                .write_kubeconfig
                .clone()
                .unwrap_or_else(kubeconfig::default_kubeconfig_path);
            let token = completed.token.as_deref();
            match kubeconfig::write_kubeconfig(&path, &url, ca_pem, token) {
                Ok(ca_file) => {
                    say!("  kubeconfig: {}", path.display());
                    say!("  kubectl --kubeconfig {} get pods -A", path.display());
                    say!(
                        "  watch-fanout --server {url} --certificate-authority {}",
                        ca_file.display()
                    );
                    written = Some(path);
                }
                Err(error) => {
                    server.shutdown().await;
                    return Err(format!(
                        "cannot write the kubeconfig {}: {error}",
                        path.display()
                    ));
                }
            }
        }
        None => say!("  kubectl --server {} get pods -A", server.url()),
    }
    Ok(StartedServer {
        server,
        url,
        ca_pem: completed.generated_ca_pem,
        token: completed.token,
        kubeconfig: written,
    })
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
        let scheme = if server.url().starts_with("https") {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", SocketAddr::new(loopback, addr.port()))
    } else {
        server.url()
    }
}

/// Mirrors `genericapiserver.SetupSignalHandler`: resolves on SIGINT (Ctrl-C)
/// or, on Unix, SIGTERM.
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
