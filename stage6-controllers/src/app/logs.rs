//! Logging for the binaries: mirrors component-base's `logs` (`--v`,
//! `--vmodule`) as one `--log` filter in `RUST_LOG`'s syntax.

/// Logs to stderr with `filter` (`info`, `stage6_controllers=debug`); a
/// filter that does not parse falls back to `info`.
pub fn init(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
}
