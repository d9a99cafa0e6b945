//! TLS for the tests' own HTTPS servers: a listener for `axum::serve` that completes the
//! handshake, and the acceptor it uses. Included by path (`#[path = "support/tls.rs"] mod tls;`)
//! from the test files that serve HTTPS, not part of the support library: tokio-rustls and axum
//! are dev-dependencies, which the library cannot use.

use std::sync::Arc;
use tokio_rustls::rustls;

/// Accepts TCP connections and completes the TLS handshake; for `axum::serve`.
pub struct TlsListener {
    pub tcp: tokio::net::TcpListener,
    pub tls: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            // A client that does not trust the certificate gives up in the handshake.
            if let Ok(tls) = self.tls.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// A TLS acceptor (rustls on ring) presenting `certificate` (DER) with its PKCS#8 private `key`
/// (DER).
pub fn acceptor(
    certificate: rustls::pki_types::CertificateDer<'static>,
    key: Vec<u8>,
) -> tokio_rustls::TlsAcceptor {
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![certificate],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()),
    )
    .expect("a certificate and its key");
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}
