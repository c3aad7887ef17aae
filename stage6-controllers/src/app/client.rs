//! How a controller process reaches its API server: `--master` and
//! `--kubeconfig`, as kube-controller-manager, kube-scheduler and kubemark
//! take them (client-go's `clientcmd.BuildConfigFromFlags`).

use std::path::PathBuf;

use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The connection flags.
#[derive(Clone, Debug, Args)]
pub struct ClientOptions {
    /// The API server's URL (`--master`, or kubectl's `--server`); overrides
    /// the kubeconfig's server. Without it or `--kubeconfig`:
    /// `http://127.0.0.1:8080`, where `mini-apiserver` serves by default.
    #[arg(long, visible_alias = "server", value_name = "URL")]
    pub master: Option<String>,
    /// A kubeconfig file, such as the one `mini-apiserver --secure` writes
    /// (`--kubeconfig`).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
}

/// Where `mini-apiserver` serves by default.
pub const DEFAULT_MASTER: &str = "http://127.0.0.1:8080";

impl ClientOptions {
    /// The server these flags point at, for a log line.
    pub fn describe(&self) -> String {
        match (&self.master, &self.kubeconfig) {
            (Some(master), _) => master.clone(),
            (None, Some(path)) => format!("the server of {}", path.display()),
            (None, None) => DEFAULT_MASTER.to_string(),
        }
    }
}

/// Mirrors `BuildConfigFromFlags`: the kubeconfig's cluster and user (its
/// current context), with `--master` overriding the server; neither flag:
/// [`DEFAULT_MASTER`] without credentials. kube's own retries are off, as
/// stage 3's `KubeListerWatcher::client` turns them off, so that 429 and 504
/// reach the informers' and the queues' backoff.
pub async fn client_for(options: &ClientOptions) -> Result<kube::Client, String> {
    let mut config = match &options.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|error| {
                format!("cannot read the kubeconfig {}: {error}", path.display())
            })?;
            kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &KubeConfigOptions::default(),
            )
            .await
            .map_err(|error| {
                format!("cannot use the kubeconfig {}: {error}", path.display())
            })?
        }
        None => kube::Config::new(
            DEFAULT_MASTER
                .parse()
                .map_err(|error| format!("bad default server: {error}"))?,
        ),
    };
    if let Some(master) = &options.master {
        config.cluster_url = master
            .parse()
            .map_err(|error| format!("--master {master:?} is not a URL: {error}"))?;
    }
    config.default_retry = false;
    kube::Client::try_from(config)
        .map_err(|error| format!("cannot build a client: {error}"))
}

/// How every component binary starts (`mini-controller-manager`,
/// `mini-scheduler`, `hollow-node`): logging with the `--log` filter, then a
/// client from its flags. On an error it says so as `name` and gives the exit
/// code to return.
pub async fn start_component(
    name: &str,
    options: &ClientOptions,
    log: &str,
) -> Result<kube::Client, std::process::ExitCode> {
    super::logs::init(log);
    client_for(options).await.map_err(|error| {
        eprintln!("{name}: {error}");
        std::process::ExitCode::FAILURE
    })
}

/// A client for components that run in the API server's own process
/// (`mini-cluster`): the server's URL, its generated CA when it made one, and
/// the first token of its `--token-file`. With a certificate of the user's own
/// (`--tls-cert-file`) the CA is unknown here, so the in-process client skips
/// verification: it talks to its own process over the address it bound.
pub async fn in_process_client(
    started: &stage5_apiserver::app::server::StartedServer,
) -> Result<kube::Client, String> {
    let mut config = match &started.ca_pem {
        Some(ca_pem) => {
            let yaml = stage5_apiserver::kubeconfig::kubeconfig_yaml(
                &started.url,
                ca_pem,
                started.token.as_deref(),
            );
            let kubeconfig = Kubeconfig::from_yaml(&yaml).map_err(|error| {
                format!("cannot read the generated kubeconfig: {error}")
            })?;
            kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &KubeConfigOptions::default(),
            )
            .await
            .map_err(|error| {
                format!("cannot use the generated kubeconfig: {error}")
            })?
        }
        None => {
            let mut config =
                kube::Config::new(started.url.parse().map_err(|error| {
                    format!("bad server URL {}: {error}", started.url)
                })?);
            config.accept_invalid_certs = started.url.starts_with("https");
            if let Some(token) = &started.token {
                config.auth_info.token = Some(token.clone().into());
            }
            config
        }
    };
    config.default_retry = false;
    kube::Client::try_from(config)
        .map_err(|error| format!("cannot build a client: {error}"))
}
