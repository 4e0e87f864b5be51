//! The exporters' HTTP client: ureq, blocking, on the SDK's own export
//! threads (its batch span processor and periodic metric reader run plain
//! threads and wait on this future there, so no async runtime is needed).
//! Every request is bounded by the exporter timeout of the environment.

use std::time::Duration;

use async_trait::async_trait;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// The most bytes of a collector's reply read (its body is only a status).
const REPLY_MAX: u64 = 4 << 20;

#[derive(Debug)]
pub(super) struct Client {
    agent: ureq::Agent,
}

impl Client {
    /// A client whose every request ends within `timeout`.
    pub(super) fn new(timeout: Duration) -> Self {
        let tls = ureq::tls::TlsConfig::builder().root_certs(roots()).build();
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .tls_config(tls)
            .build()
            .into();
        Client { agent }
    }
}

/// The system's CA certificates (as our own TLS connections take them,
/// src/wire.rs), or Mozilla's when the system has none.
fn roots() -> ureq::tls::RootCerts {
    let found = rustls_native_certs::load_native_certs().certs;
    if found.is_empty() {
        return ureq::tls::RootCerts::WebPki;
    }
    let certs: Vec<ureq::tls::Certificate<'static>> = found
        .iter()
        .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    ureq::tls::RootCerts::new_with_certs(&certs)
}

#[async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let reply = self.agent.run(Request::from_parts(parts, body.to_vec()))?;
        let (parts, mut body) = reply.into_parts();
        let body = body.with_config().limit(REPLY_MAX).read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(body)))
    }
}
