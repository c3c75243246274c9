//! `/sandbox/messages` to a `chat` that is no conversation: a contact's
//! status, a message to its broadcast list, a channel's post
//! (`crate::broadcasts` carries them).
use parley_contract::wire::sandbox::SandboxMessage;
use whatsapp_rust::features::StatusSendOptions;

use super::messages::{invalid, plain, with_context};
use super::{Refusal, SessionRef, World, failed};

/// Where a message goes that is not to a chat.
pub(super) enum Outside {
    /// The sender's status (`status@broadcast`).
    Status,
    /// A broadcast list of the sender's (`<id>@broadcast`).
    List(String),
    /// A channel the session's phone follows (`<id>@newsletter`).
    Channel(String),
}

impl World {
    /// A contact's status, broadcast list message or channel post to the
    /// session's phone (`crate::broadcasts`).
    pub(super) async fn outside_chats(
        &self,
        session: &SessionRef,
        sender: &str,
        outside: Outside,
        m: SandboxMessage,
    ) -> Result<String, Refusal> {
        if sender == session.phone {
            return Err(invalid(
                "the test network carries statuses, broadcast lists and channels from a contact only",
            ));
        }
        let device = self.phone(sender).await?;
        let message = plain(&device, &m).await?.ok_or_else(|| {
            invalid(format!(
                "the test network carries text, media, location and contact messages only to statuses, broadcast lists and channels, not {}",
                m.kind
            ))
        })?;
        let message = with_context(message, &m);
        let id = m
            .message_id
            .clone()
            .filter(|i| !i.trim().is_empty())
            .unwrap_or_else(|| device.client.generate_message_id());
        let recipient = format!("{}@s.whatsapp.net", session.phone);
        match outside {
            Outside::Status => {
                let options = StatusSendOptions {
                    message_id: Some(id.clone()),
                    ..Default::default()
                };
                // A status's audience is named by LID.
                let lid = format!("{}@lid", self.lid(&session.phone));
                let audience = [lid.parse().map_err(failed)?];
                device
                    .client
                    .status()
                    .send_raw(message, &audience, options)
                    .await
                    .map_err(failed)?;
            }
            Outside::List(list) => {
                self.net.to_list(&id, &list);
                device
                    .send_as(&recipient, message, Some(&id))
                    .await
                    .map_err(failed)?;
            }
            Outside::Channel(channel) => {
                self.net
                    .post_to_channel(&session.phone, &channel, &id, &message);
                return Ok(id);
            }
        }
        // The server fans these out itself: make sure the session was among
        // their recipients, so that a test of what the gateway drops is one.
        // (The library's send returns once the stanza is written.)
        let reached = self
            .net
            .watcher()
            .relayed(
                (sender, 0),
                (&session.phone, session.device),
                &id,
                std::time::Duration::from_secs(10),
            )
            .await;
        if !reached {
            return Err(Refusal::Failed(format!(
                "message {id} did not reach the session's device"
            )));
        }
        Ok(id)
    }
}
