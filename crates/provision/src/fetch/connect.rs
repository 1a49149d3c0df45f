//! How connections are made where ureq's defaults differ from Go's `net/http`, which
//! Ignition uses and whose behaviour configs in the field rely on:
//!
//! - TLS: a server certificate that is itself one of the trusted certificates is accepted
//!   (for its host name), as Go accepts it. Many home and lab servers use one self-signed
//!   certificate (with `CA:TRUE`, as `openssl req -x509` makes it) and give that certificate
//!   in `certificateAuthorities`; webpki refuses a CA certificate as an end entity.
//! - Plain `http://` through an HTTP proxy: the request goes to the proxy in absolute form
//!   (`GET http://host/path`), as Go sends it, instead of a `CONNECT` tunnel, which many
//!   proxies allow only to port 443. The target's name is never resolved locally, so a host
//!   only the proxy can resolve works.

use std::fmt;
use std::io::{Read, Write};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, StreamOwned};
use ureq::Error;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
    TransportAdapter,
};

/// The rustls client configuration: the given roots, with [`OwnCertVerifier`].
pub(crate) fn client_config(
    roots: &[CertificateDer<'static>],
) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut store = RootCertStore::empty();
    store.add_parsable_certificates(roots.iter().cloned());
    // No roots at all (an initramfs without a system store, a config naming none) is no
    // error until a TLS server has to be trusted: plain HTTP must still work.
    let inner = if store.is_empty() {
        None
    } else {
        let built = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
            .build()
            .map_err(|e| format!("TLS roots: {e}"))?;
        Some(built)
    };
    let verifier = OwnCertVerifier {
        inner,
        algs: provider.signature_verification_algorithms,
        trusted: roots.to_vec(),
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// webpki's verification, and besides it: a server certificate byte-identical to a trusted
/// one is accepted when it names the host (Go puts a trusted leaf in a chain of its own).
#[derive(Debug)]
struct OwnCertVerifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    algs: rustls::crypto::WebPkiSupportedAlgorithms,
    trusted: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for OwnCertVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verdict = match &self.inner {
            Some(inner) => {
                inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
            }
            None => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        };
        match verdict {
            Ok(v) => Ok(v),
            Err(e)
                if self
                    .trusted
                    .iter()
                    .any(|t| t.as_ref() == end_entity.as_ref()) =>
            {
                let cert =
                    rustls::server::ParsedCertificate::try_from(end_entity).map_err(|_| e)?;
                rustls::client::verify_server_name(&cert, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            Err(e) => Err(e),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// Wraps the chained transport in TLS (for https) with [`client_config`].
pub(crate) struct TlsConnector(pub Arc<ClientConfig>);

impl fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TlsConnector")
    }
}

impl<In: Transport> Connector<In> for TlsConnector {
    type Out = Either<In, TlsTransport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let host = details
            .uri
            .authority()
            .map(|a| a.host().trim_start_matches('[').trim_end_matches(']'))
            .unwrap_or_default();
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| Error::Tls("invalid host name for TLS"))?;
        let mut conn = ClientConnection::new(self.0.clone(), name)?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        conn.complete_io(&mut sock)?;
        Ok(Some(Either::B(TlsTransport {
            buffers: LazyBuffers::new(
                details.config.input_buffer_size(),
                details.config.output_buffer_size(),
            ),
            stream: StreamOwned { conn, sock },
        })))
    }
}

pub(crate) struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TlsTransport")
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let amount = self.stream.read(input)?;
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

/// Resolves every host to the proxy's addresses: the connection goes to the proxy, and the
/// target's name is left to it.
#[derive(Debug)]
pub(crate) struct ToProxy(pub ureq::http::Uri);

impl Resolver for ToProxy {
    fn resolve(
        &self,
        _uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, Error> {
        DefaultResolver::default().resolve(&self.0, config, timeout)
    }
}

/// Rewrites each request line to absolute form (and adds the proxy's credentials), for a
/// plain-HTTP request sent to a proxy.
#[derive(Debug)]
pub(crate) struct AbsoluteForm {
    /// `Proxy-Authorization` value, from the proxy URL's user information.
    pub auth: Option<String>,
}

impl<In: Transport> Connector<In> for AbsoluteForm {
    type Out = AbsoluteFormTransport<In>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        let Some(inner) = chained else {
            return Ok(None);
        };
        let authority = details
            .uri
            .authority()
            .map(|a| a.as_str().rsplit('@').next().unwrap_or("").to_string())
            .unwrap_or_default();
        Ok(Some(AbsoluteFormTransport {
            inner,
            prefix: format!("http://{authority}"),
            auth: self.auth.clone(),
        }))
    }
}

#[derive(Debug)]
pub(crate) struct AbsoluteFormTransport<In> {
    inner: In,
    prefix: String,
    auth: Option<String>,
}

/// The request line's target in `buf` (`METHOD /path HTTP/1.1\r\n…`): where the path starts
/// and where the line ends.
fn request_target(buf: &[u8]) -> Option<(usize, usize)> {
    let line_end = buf.windows(2).position(|w| w == b"\r\n")?;
    let line = &buf[..line_end];
    let sp = line.iter().position(|b| *b == b' ')?;
    (line.get(sp + 1) == Some(&b'/') && line.ends_with(b" HTTP/1.1")).then_some((sp + 1, line_end))
}

impl<In: Transport> Transport for AbsoluteFormTransport<In> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let buf = self.inner.buffers().output();
        let Some((at, line_end)) = request_target(&buf[..amount]) else {
            return self.inner.transmit_output(amount, timeout);
        };
        let mut insert: Vec<(usize, Vec<u8>)> = vec![(at, self.prefix.clone().into_bytes())];
        if let Some(a) = &self.auth {
            insert.push((
                line_end + 2,
                format!("Proxy-Authorization: {a}\r\n").into_bytes(),
            ));
        }
        let extra: usize = insert.iter().map(|(_, b)| b.len()).sum();
        if amount + extra > buf.len() {
            return Err(Error::Other("request head too large for the proxy".into()));
        }
        // Shift the tail right and fill the gaps, last insertion first.
        let mut end = amount;
        let mut shift = extra;
        for (pos, bytes) in insert.iter().rev() {
            buf.copy_within(*pos..end, pos + shift);
            shift -= bytes.len();
            buf[pos + shift..pos + shift + bytes.len()].copy_from_slice(bytes);
            end = *pos;
        }
        self.inner.transmit_output(amount + extra, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        self.inner.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_request_target() {
        assert_eq!(
            request_target(b"GET /a?b HTTP/1.1\r\nHost: h\r\n\r\n"),
            Some((4, 17))
        );
        assert_eq!(request_target(b"body bytes"), None);
        assert_eq!(request_target(b"GET http://h/ HTTP/1.1\r\n"), None);
    }
}
