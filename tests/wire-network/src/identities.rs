//! A number registered again (a reinstall: a new primary device with new
//! keys): once the new install uploaded its keys, the accounts that
//! exchanged messages with it hear of its new identity in a
//! `<notification type="encrypt" from="<lid>@lid">` with an `<identity/>`
//! child, live or from the offline queue, as the real server tells them. whatsapp-rust (`handlers/notification/device.rs`,
//! `handle_identity_change`) then drops its session with the old keys, so
//! that the next message is sealed for the new ones, and issues again a
//! privacy token it had issued the contact (`reissue_tc_token_after_
//! identity_change`). A test can keep the news back, to see a message
//! sealed for the old keys take the retry path instead.
use crate::nodes::{element, now};
use crate::registry::Registry;

/// Tells every device of the accounts `phone` exchanged messages with that
/// its identity changed (unless the network keeps such news back).
pub fn announce(reg: &mut Registry, phone: &str) {
    if reg.quiet_identity_changes {
        return;
    }
    let Some(lid) = reg.accounts.get(phone).map(|a| a.lid.clone()) else {
        return;
    };
    for (contact, devices) in reg.contacts_of(phone) {
        for device in devices {
            let id = format!("identity-{}", hex::encode(rand10::random::<[u8; 6]>()));
            let notification = element(
                "notification",
                &[
                    ("type", "encrypt".into()),
                    ("from", format!("{lid}@lid")),
                    ("id", id.clone()),
                    ("t", now().to_string()),
                ],
                vec![element("identity", &[], vec![])],
            );
            reg.identity_notices
                .push((id, phone.to_string(), (contact.clone(), device)));
            reg.deliver(&contact, device, notification);
        }
    }
}

impl crate::WireNetwork {
    /// Whether a reinstall is announced to the accounts that wrote with the
    /// number (on by default).
    pub fn announce_identity_changes(&self, on: bool) {
        self.inner.registry().quiet_identity_changes = !on;
    }
}

impl crate::Watcher {
    /// Waits up to `deadline` until device `device` of `phone` has handled
    /// the news that `changed`'s identity changed (it acknowledged the
    /// notification, which whatsapp-rust does once it handled it).
    pub async fn heard_identity_change(
        &self,
        phone: &str,
        device: u16,
        changed: &str,
        deadline: std::time::Duration,
    ) -> bool {
        let key = (phone.to_string(), device);
        self.0
            .wait_until(deadline, |reg| {
                reg.identity_notices
                    .iter()
                    .any(|(id, who, to)| who == changed && *to == key && reg.has_acked(&key, id))
            })
            .await
    }
}
