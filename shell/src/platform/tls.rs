//! The TLS of the shell's HTTPS clients (`redmark call --url https://…`, OAuth metadata and
//! keys): rustls with its bundled web roots, except on Apple platforms, which use the system's
//! TLS and roots (native-tls; see shell/Cargo.toml).

/// The TLS configuration every `ureq` agent of the shell is built with.
pub fn config() -> ureq::tls::TlsConfig {
    #[cfg(target_vendor = "apple")]
    {
        use ureq::tls::{RootCerts, TlsConfig, TlsProvider};
        TlsConfig::builder()
            .provider(TlsProvider::NativeTls)
            .root_certs(RootCerts::PlatformVerifier)
            .build()
    }
    #[cfg(not(target_vendor = "apple"))]
    {
        ureq::tls::TlsConfig::default()
    }
}
