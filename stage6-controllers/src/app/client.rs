//! How a controller process reaches its API server: `--master` and
//! `--kubeconfig`, as kube-controller-manager, kube-scheduler and kubemark
//! take them (client-go's `clientcmd.BuildConfigFromFlags`).

use std::path::PathBuf;

use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The connection flags.
#[derive(Clone, Debug, Args)]
pub struct ClientOptions {
    /// The API server's URL (`--master`); overrides the kubeconfig's server.
    /// Without either flag: `http://127.0.0.1:8080`, where `mini-apiserver`
    /// serves by default.
    #[arg(long, value_name = "URL")]
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
/// [`DEFAULT_MASTER`] without credentials.
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
    kube::Client::try_from(config)
        .map_err(|error| format!("cannot build a client: {error}"))
}
