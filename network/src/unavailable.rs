//! A network that is never reachable: every connect fails as unreachable, so
//! sessions report a clear state and retry with backoff (the supervisor's
//! tests of that path use it).
use async_trait::async_trait;
use tokio::sync::mpsc;

use crate::{ClientId, Connection, Network, NetworkError, NetworkEvent, SessionContext};

/// Why the adapter refuses to connect.
pub const WHY: &str = "no network adapter is reachable";

/// Refuses every connect as unreachable.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnavailableNetwork;

#[async_trait]
impl Network for UnavailableNetwork {
    async fn connect(
        &self,
        _ctx: SessionContext,
    ) -> Result<(Box<dyn Connection>, mpsc::Receiver<NetworkEvent>), NetworkError> {
        Err(NetworkError::Unreachable(WHY.into()))
    }

    async fn forget(&self, _client_id: &ClientId) -> Result<(), NetworkError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn connect_fails_as_unreachable_with_a_clear_reason() {
        let id = ClientId::parse("a1").unwrap();
        let ctx = SessionContext {
            client_id: id.clone(),
            fence: 1,
            pod_name: "p".into(),
            proxy: None,
        };
        let err = UnavailableNetwork.connect(ctx).await.err();
        assert_eq!(err, Some(NetworkError::Unreachable(WHY.into())));
        assert_eq!(UnavailableNetwork.forget(&id).await, Ok(()));
    }
}
