//! Serving certificates: mirrors apiserver's `pkg/server/options/serving.go`
//! (`SecureServingOptions`: `--tls-cert-file`, `--tls-private-key-file`, and
//! `MaybeDefaultWithSelfSignedCerts`), client-go's `util/cert/cert.go`
//! (`GenerateSelfSignedCertKey`) and the TLS configuration of
//! `pkg/server/secure_serving.go` (`tlsConfig`).
//!
//! ```text
//! --tls-cert-file + --tls-private-key-file ─► CertKey::read ─┐
//! --secure ─► generate_self_signed_cert_key ─► SelfSigned ───┴► CertKey ─► tls_acceptor
//!                          └─► ca_pem ─► kubeconfig::write_kubeconfig
//! ```
//!
//! The handshake itself, bounded by the read header timeout, is in the server's
//! accept loop (`server/tls.rs`).
//!
//! # Differences from upstream
//! Keys are ECDSA P-256 (rcgen with ring cannot make RSA keys); Go makes RSA 2048
//! keys. Only HTTP/1.1 is offered by ALPN (upstream offers `h2` first).

use std::io;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Why a serving certificate or key could not be read, parsed or generated
/// (the server reports it as `ServerError::Tls`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(pub String);

/// How long a generated certificate is valid: mirrors `GenerateSelfSignedCertKey`'s
/// `maxAge` (one year), counted from [`CLOCK_SKEW`] before now.
pub const SELF_SIGNED_MAX_AGE: Duration = Duration::from_secs(365 * 24 * 3600);
/// Mirrors `GenerateSelfSignedCertKey`'s `validFrom := time.Now().Add(-time.Hour)`
/// ("valid an hour earlier to avoid flakes due to clock skew").
pub const CLOCK_SKEW: Duration = Duration::from_secs(3600);

/// A serving certificate chain and its private key, both PEM: what
/// `--tls-cert-file` and `--tls-private-key-file` name (upstream's
/// `CertKey{CertFile, KeyFile}`).
#[derive(Clone)]
pub struct CertKey {
    /// The serving certificate, then any intermediates (and, from
    /// [`generate_self_signed_cert_key`], the CA), PEM.
    pub cert_pem: Vec<u8>,
    /// Its private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for CertKey {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertKey")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .finish_non_exhaustive()
    }
}

impl CertKey {
    /// Reads `--tls-cert-file` and `--tls-private-key-file` (as Go's
    /// `tls.LoadX509KeyPair`); whether they parse is checked by [`tls_acceptor`].
    pub fn read(cert_file: &Path, key_file: &Path) -> Result<Self, TlsError> {
        let read = |path: &Path, what: &str| {
            std::fs::read(path).map_err(|error| {
                TlsError(format!(
                    "cannot read the {what} {}: {error}",
                    path.display()
                ))
            })
        };
        Ok(CertKey {
            cert_pem: read(cert_file, "certificate (--tls-cert-file)")?,
            key_pem: read(key_file, "private key (--tls-private-key-file)")?,
        })
    }
}

/// What [`generate_self_signed_cert_key`] makes: the serving pair and the CA that
/// signed it, which clients trust (a kubeconfig's `certificate-authority-data`).
#[derive(Clone, Debug)]
pub struct SelfSigned {
    /// The serving certificate followed by the CA certificate, and the serving key.
    pub serving: CertKey,
    /// The CA certificate alone, PEM.
    pub ca_pem: String,
}

/// Mirrors client-go's `cert.GenerateSelfSignedCertKey(host, alternateIPs,
/// alternateDNS)`: a CA named `<host>-ca@<unix time>` signs a serving certificate
/// named `<host>@<unix time>` for `host` plus the alternates (server auth only),
/// both valid from an hour ago for a year. The chain is the serving certificate,
/// then the CA, as upstream writes it.
///
/// Clients must trust the CA, not the serving certificate: rustls (webpki) refuses a
/// CA certificate used as a server's own, which is also why upstream makes two.
pub fn generate_self_signed_cert_key(
    host: &str,
    alternate_ips: &[IpAddr],
    alternate_dns: &[&str],
) -> Result<SelfSigned, TlsError> {
    let failed = |error: rcgen::Error| TlsError(format!("cannot generate: {error}"));
    let now = time::OffsetDateTime::now_utc();
    let valid_from = now - CLOCK_SKEW;
    let unix = now.unix_timestamp();

    let ca_key = KeyPair::generate().map_err(failed)?;
    let mut ca = CertificateParams::default();
    ca.distinguished_name
        .push(DnType::CommonName, format!("{host}-ca@{unix}"));
    ca.not_before = valid_from;
    ca.not_after = valid_from + SELF_SIGNED_MAX_AGE;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
    ];
    let ca_cert = ca.self_signed(&ca_key).map_err(failed)?;

    let key = KeyPair::generate().map_err(failed)?;
    let mut names = vec![host.to_owned()];
    names.extend(alternate_ips.iter().map(IpAddr::to_string));
    names.extend(alternate_dns.iter().map(|name| (*name).to_owned()));
    let mut serving = CertificateParams::new(names).map_err(failed)?;
    // An address becomes an IP SAN, anything else a DNS SAN (upstream's
    // `net.ParseIP(host)` test).
    serving
        .distinguished_name
        .push(DnType::CommonName, format!("{host}@{unix}"));
    serving.not_before = valid_from;
    serving.not_after = valid_from + SELF_SIGNED_MAX_AGE;
    serving.key_usages = vec![
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::DigitalSignature,
    ];
    serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let issuer = Issuer::new(ca, &ca_key);
    let serving_cert = serving.signed_by(&key, &issuer).map_err(failed)?;

    let ca_pem = ca_cert.pem();
    Ok(SelfSigned {
        serving: CertKey {
            cert_pem: format!("{}{ca_pem}", serving_cert.pem()).into_bytes(),
            key_pem: key.serialize_pem().into_bytes(),
        },
        ca_pem,
    })
}

/// The certificate `--secure` generates: mirrors `MaybeDefaultWithSelfSignedCerts`,
/// for `127.0.0.1`, `::1` and `localhost`, plus the bind address when it is a
/// specific non-loopback one (upstream adds the bind address, or `localhost` when
/// it is unspecified).
pub fn self_signed_for(bind: IpAddr) -> Result<SelfSigned, TlsError> {
    let mut ips = vec![IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1])];
    if !bind.is_loopback() && !bind.is_unspecified() {
        ips.push(bind);
    }
    generate_self_signed_cert_key("127.0.0.1", &ips, &["localhost"])
}

/// [`self_signed_for`] a loopback address.
pub fn loopback_self_signed() -> Result<SelfSigned, TlsError> {
    self_signed_for(IpAddr::from([127, 0, 0, 1]))
}

/// ALPN: HTTP/1.1 only (upstream's `secure_serving.go` offers `h2` first; this
/// server speaks HTTP/1.1).
pub const ALPN_PROTOCOLS: &[&[u8]] = &[b"http/1.1"];

/// The rustls server configuration for `cert`: mirrors `secure_serving.go`'s
/// `tlsConfig` (`MinVersion: tls.VersionTLS12`, `NextProtos`), with the ring
/// provider that kube's client also uses (set here, not process-wide). A
/// certificate or key that does not parse or match is a [`TlsError`].
pub fn tls_acceptor(cert: &CertKey) -> Result<TlsAcceptor, TlsError> {
    let bad = |what: &str, error: &dyn std::fmt::Display| {
        TlsError(format!("{what}: {error}"))
    };
    let chain = CertificateDer::pem_slice_iter(&cert.cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| bad("the certificate is not PEM", &error))?;
    if chain.is_empty() {
        return Err(TlsError(
            "the certificate file holds no CERTIFICATE block".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(&cert.key_pem)
        .map_err(|error| bad("the private key is not a PEM private key", &error))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|error| bad("TLS versions", &error))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|error| bad("the certificate and key", &error))?;
    config.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Writes `contents` to `path` (its directory created), readable by the owner
/// only on Unix: for keys and kubeconfigs.
pub fn write_private_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    io::Write::write_all(&mut options.open(path)?, contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_material_makes_an_acceptor() {
        let generated = loopback_self_signed().expect("generate");
        assert!(generated.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let chain = CertificateDer::pem_slice_iter(&generated.serving.cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .expect("pem");
        assert_eq!(chain.len(), 2, "serving certificate, then the CA");
        tls_acceptor(&generated.serving).expect("acceptor");
    }

    #[test]
    fn a_key_that_is_not_pem_is_an_error_not_a_panic() {
        let mut cert = loopback_self_signed().expect("generate").serving;
        cert.key_pem = b"not a key".to_vec();
        let error = tls_acceptor(&cert).err().expect("an error");
        assert!(error.to_string().contains("private key"), "{error}");
        cert.cert_pem = b"nothing".to_vec();
        assert!(tls_acceptor(&cert).is_err());
    }
}
