//! The websocket to the network: the library's own tokio transport when no
//! proxy is configured, else [`ProxiedTransport`] (TCP through the proxy, then
//! TLS and the websocket upgrade on that stream). [`Observed`] wraps either and
//! keeps the last failure, so a connect that cannot reach the network says why.
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use whatsapp_rust::transport::{
    Connector, Transport, TransportEvent, TransportFactory, default_tls_connector, from_websocket,
};
use whatsapp_rust::wacore::net::{WHATSAPP_WEB_ORIGIN, WHATSAPP_WEB_WS_URL};

use parley_network::proxy::{Proxy, ProxyError};

type Created = (
    Arc<dyn Transport>,
    whatsapp_rust::async_channel::Receiver<TransportEvent>,
);

/// A websocket to `url` (default: the network's) through `proxy`.
pub struct ProxiedTransport {
    proxy: Proxy,
    url: String,
}

impl ProxiedTransport {
    pub fn new(proxy: Proxy) -> Self {
        Self {
            proxy,
            url: WHATSAPP_WEB_WS_URL.to_string(),
        }
    }

    /// Dials another websocket URL (a test network server on loopback).
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = url.into();
        self
    }
}

#[async_trait]
impl TransportFactory for ProxiedTransport {
    async fn create_transport(&self) -> Result<Created, anyhow::Error> {
        let uri: http::Uri = self
            .url
            .parse()
            .map_err(|e| anyhow::anyhow!("invalid websocket URL {}: {e}", self.url))?;
        let host = uri
            .host()
            .ok_or_else(|| anyhow::anyhow!("the websocket URL {} names no host", self.url))?
            .to_string();
        let tls = uri.scheme_str() == Some("wss");
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let tcp = self
            .proxy
            .tunnel(&host, port)
            .await
            .map_err(anyhow::Error::new)?;
        let connector = if tls {
            default_tls_connector()
        } else {
            Connector::Plain
        };
        let stream = connector
            .wrap(&host, tcp)
            .await
            .map_err(|e| anyhow::anyhow!("TLS through the proxy failed: {e}"))?;
        let origin = http::HeaderValue::from_static(WHATSAPP_WEB_ORIGIN);
        let (ws, _) = tokio_websockets::ClientBuilder::from_uri(uri)
            .add_header(http::header::ORIGIN, origin)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .connect_on(stream)
            .await
            .map_err(|e| anyhow::anyhow!("websocket upgrade through the proxy failed: {e}"))?;
        Ok(from_websocket(ws))
    }
}

/// Why a transport could not be made: the whole chain of causes, and the
/// proxy's failure when that was it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub why: String,
    pub proxy: Option<ProxyError>,
}

/// The last transport failure of one connection's factory.
#[derive(Clone, Default)]
pub struct LastFailure(Arc<Mutex<Option<Failure>>>);

impl LastFailure {
    pub fn get(&self) -> Option<Failure> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, failure: Option<Failure>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = failure;
    }
}

/// A transport factory that records its last failure.
pub struct Observed {
    inner: Box<dyn TransportFactory>,
    failure: LastFailure,
}

impl Observed {
    pub fn new(inner: Box<dyn TransportFactory>) -> (Self, LastFailure) {
        let failure = LastFailure::default();
        let observed = Self {
            inner,
            failure: failure.clone(),
        };
        (observed, failure)
    }
}

#[async_trait]
impl TransportFactory for Observed {
    async fn create_transport(&self) -> Result<Created, anyhow::Error> {
        let created = self.inner.create_transport().await;
        self.failure.set(created.as_ref().err().map(|e| Failure {
            why: format!("{e:#}"),
            proxy: e.downcast_ref::<ProxyError>().cloned(),
        }));
        created
    }
}
