//! TLS set-up shared by every HTTP client in the host (extensions' fetch, MCP over HTTP).

/// Installs rustls's ring crypto provider for the process (once; later calls do nothing), so that
/// no C toolchain is needed for aws-lc.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
