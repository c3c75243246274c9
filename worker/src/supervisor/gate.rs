//! A network that passes another's connections through but keeps each
//! `Connected` event while its gate is closed: the session is connected on
//! the wire but not yet online, as on a slow network or right after a
//! handover.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio::sync::{mpsc, watch};

use crate::network::{Connection, Network, NetworkError, NetworkEvent, SessionContext};
use parley_model::ids::ClientId;

pub struct GatedNetwork {
    inner: Arc<dyn Network>,
    open: watch::Sender<bool>,
    connects: AtomicUsize,
}

impl GatedNetwork {
    /// Open at first.
    pub fn new(inner: Arc<dyn Network>) -> Self {
        Self {
            inner,
            open: watch::channel(true).0,
            connects: AtomicUsize::new(0),
        }
    }

    pub fn close(&self) {
        self.open.send_replace(false);
    }

    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// Connections made so far.
    pub fn connects(&self) -> usize {
        self.connects.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Network for GatedNetwork {
    async fn connect(
        &self,
        ctx: SessionContext,
    ) -> Result<(Box<dyn Connection>, mpsc::Receiver<NetworkEvent>), NetworkError> {
        let (connection, mut events) = self.inner.connect(ctx).await?;
        let (tx, rx) = mpsc::channel(64);
        let mut gate = self.open.subscribe();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if matches!(event, NetworkEvent::Connected(_))
                    && gate.wait_for(|open| *open).await.is_err()
                {
                    return;
                }
                if tx.send(event).await.is_err() {
                    return;
                }
            }
        });
        self.connects.fetch_add(1, Ordering::SeqCst);
        Ok((connection, rx))
    }

    async fn forget(&self, client_id: &ClientId) -> Result<(), NetworkError> {
        self.inner.forget(client_id).await
    }
}
