//! TLS for `https://` when the caller adds certificates to trust
//! ([`root_certificate_pem`](crate::ClientBuilder::root_certificate_pem)): the Mozilla roots
//! built in and the added ones as roots, and an added certificate that the server presents as
//! its own also accepted as it is (an ordinary self-signed certificate, made with
//! `openssl req -x509`, says it is a CA, which the WebPKI refuses as a server's certificate:
//! `CaUsedAsEndEntity`), its name still checked against the URL's host.

use crate::Error;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_name};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

/// The TLS settings for certificates added in PEM (`None`: none added, the built-in roots).
pub(crate) fn client_config(pems: &[Vec<u8>]) -> Result<Option<rustls::ClientConfig>, Error> {
    if pems.is_empty() {
        return Ok(None);
    }
    let mut added = Vec::new();
    for pem in pems {
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Transport(format!("a root certificate is not valid PEM: {e}")))?;
        if certs.is_empty() {
            return Err(Error::Transport(
                "a root certificate given holds no PEM certificate".into(),
            ));
        }
        added.extend(certs);
    }
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let (valid, _) = roots.add_parsable_certificates(added.iter().cloned());
    if valid == 0 {
        return Err(Error::Transport(
            "no root certificate given could be read as a certificate".into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| Error::Transport(format!("TLS settings: {e}")))?;
    let verifier = AddedOrWebPki {
        webpki,
        added,
        provider: provider.clone(),
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Transport(format!("TLS settings: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Some(config))
}

/// The WebPKI's verdict, or, for a certificate the caller added that the server presents as
/// its own, that certificate's name checked against the host.
#[derive(Debug)]
struct AddedOrWebPki {
    webpki: Arc<WebPkiServerVerifier>,
    added: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AddedOrWebPki {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(verified) => Ok(verified),
            Err(refused) if self.added.iter().any(|c| c.as_ref() == end_entity.as_ref()) => {
                let cert = ParsedCertificate::try_from(end_entity).map_err(|_| refused)?;
                verify_server_name(&cert, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            Err(refused) => Err(refused),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}
