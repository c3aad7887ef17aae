//! The kubeconfig `--secure` writes: mirrors kubeadm's
//! `cmd/kubeadm/app/util/kubeconfig` (`CreateBasic`, `CreateWithToken`: one
//! cluster with the CA embedded as `certificate-authority-data`, one user, one
//! context named `user@cluster`, made current) in client-go's
//! `tools/clientcmd/api/v1` format, written as `clientcmd.WriteToFile` writes it
//! (owner-only).
//!
//! kubectl (`--kubeconfig FILE`) and kube-client
//! (`kube::Config::from_custom_kubeconfig`) read it unchanged.

use std::io;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::secure_serving::write_private_file;

/// The cluster's name in the kubeconfig.
pub const CLUSTER_NAME: &str = "mini-apiserver";
/// The user's name (kubeadm's admin kubeconfig is `kubernetes-admin`).
pub const USER_NAME: &str = "admin";

/// Where `--secure` writes the kubeconfig without `--write-kubeconfig`:
/// `$TMPDIR/mini-apiserver/kubeconfig` (the CA next to it as `ca.crt`).
pub fn default_kubeconfig_path() -> PathBuf {
    std::env::temp_dir()
        .join("mini-apiserver")
        .join("kubeconfig")
}

/// The user's token when the server has no `--token-file` (and so accepts any
/// request): a user needs some credential, or kubectl prompts for a username and
/// password over HTTPS (clientcmd's `promptForAuth`).
pub const NO_AUTH_TOKEN: &str = "no-authentication";

/// The kubeconfig for `server` (`https://…`), trusting `ca_pem`, with the bearer
/// `token` (one of the server's token file; [`NO_AUTH_TOKEN`] for `None`). Mirrors
/// `CreateWithToken`.
pub fn kubeconfig_yaml(server: &str, ca_pem: &str, token: Option<&str>) -> String {
    let ca_data = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let context = format!("{USER_NAME}@{CLUSTER_NAME}");
    // JSON strings are YAML strings, so the values are quoted safely.
    let quote = |text: &str| serde_json::Value::from(text).to_string();
    let user = match token {
        Some(token) => format!("    token: {}", quote(token)),
        None => format!(
            "    # The server has no --token-file: any token is accepted.\n    \
             token: {}",
            quote(NO_AUTH_TOKEN)
        ),
    };
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {CLUSTER_NAME}\n  \
           cluster:\n    \
             server: {server}\n    \
             certificate-authority-data: {ca_data}\n\
         contexts:\n\
         - name: {context}\n  \
           context:\n    \
             cluster: {CLUSTER_NAME}\n    \
             user: {USER_NAME}\n\
         current-context: {context}\n\
         preferences: {{}}\n\
         users:\n\
         - name: {USER_NAME}\n  \
           user:\n{user}\n",
        server = quote(server),
        context = quote(&context),
    )
}

/// Writes [`kubeconfig_yaml`] to `path` and the CA to `ca.crt` beside it (for
/// tools that take a CA file, such as `watch-fanout --certificate-authority`);
/// returns the CA file's path. Both owner-only, directories created.
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca_pem: &str,
    token: Option<&str>,
) -> io::Result<PathBuf> {
    write_private_file(path, kubeconfig_yaml(server, ca_pem, token).as_bytes())?;
    let ca_file = path.with_file_name("ca.crt");
    write_private_file(&ca_file, ca_pem.as_bytes())?;
    Ok(ca_file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_names_the_server_and_embeds_the_ca() {
        let yaml = kubeconfig_yaml("https://127.0.0.1:6443", "PEM", Some("t\"k"));
        assert!(
            yaml.contains("server: \"https://127.0.0.1:6443\"\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("certificate-authority-data: UEVN\n"),
            "{yaml}"
        );
        assert!(yaml.contains("current-context: \"admin@mini-apiserver\"\n"));
        assert!(yaml.contains("token: \"t\\\"k\"\n"), "{yaml}");
        let anonymous = kubeconfig_yaml("https://127.0.0.1:6443", "PEM", None);
        assert!(
            anonymous.ends_with("    token: \"no-authentication\"\n"),
            "{anonymous}"
        );
    }
}
