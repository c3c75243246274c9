//! An in-process bus whose connection can be made to seem lost.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use parley_shared::bus::memory::MemoryBus;
use parley_shared::bus::{Bus, BusError, Message, Subscription};

/// [`MemoryBus`] whose [`Bus::healthy`] says what the test says.
#[derive(Clone)]
pub struct LosableBus {
    inner: MemoryBus,
    lost: Arc<AtomicBool>,
}

impl LosableBus {
    pub fn new(inner: MemoryBus) -> Self {
        Self {
            inner,
            lost: Arc::default(),
        }
    }

    /// The connection seems lost (`true`) or back (`false`).
    pub fn lose(&self, lost: bool) {
        self.lost.store(lost, Ordering::SeqCst);
    }
}

#[async_trait]
impl Bus for LosableBus {
    async fn request(
        &self,
        subject: &str,
        request: Message,
        timeout: Duration,
    ) -> Result<Message, BusError> {
        self.inner.request(subject, request, timeout).await
    }
    async fn subscribe(
        &self,
        subject: &str,
        queue_group: Option<&str>,
    ) -> Result<Subscription, BusError> {
        self.inner.subscribe(subject, queue_group).await
    }
    async fn publish(&self, subject: &str, message: Message) -> Result<(), BusError> {
        self.inner.publish(subject, message).await
    }
    async fn healthy(&self) -> bool {
        !self.lost.load(Ordering::SeqCst)
    }
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
}
