//! Mentions given as bare user-parts. The API accepts a LID user-part or phone
//! digits alike, and both are strings of digits; the network needs the JID.
//! The connection's LID <-> phone mapping decides, then one number check for
//! what it does not know: digits the network knows as a phone number are that
//! contact (by LID when it has one), anything else is a LID.
use whatsapp_rust::Jid;

use super::connection::LiveConnection;

/// No phone number (E.164) has more digits than this.
const LONGEST_PHONE: usize = 15;

/// What is known of a bare user-part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Known {
    /// A LID the connection has seen.
    Lid,
    /// A phone number, with the contact's LID when the network gave one.
    Phone(Option<String>),
    /// Neither: the number check said no such phone number.
    NotAPhone,
    /// Nothing could be learned (no mapping, and the check failed).
    Nothing,
}

/// The JID to mention for `user` given what is known of it.
pub(super) fn mention_jid(user: &str, known: &Known) -> String {
    if user.contains('@') {
        return user.to_string();
    }
    match known {
        Known::Lid | Known::NotAPhone => format!("{user}@lid"),
        Known::Phone(Some(lid)) => format!("{lid}@lid"),
        Known::Phone(None) => format!("{user}@s.whatsapp.net"),
        Known::Nothing if user.len() > LONGEST_PHONE => format!("{user}@lid"),
        Known::Nothing => format!("{user}@s.whatsapp.net"),
    }
}

impl LiveConnection {
    /// The mentioned JIDs of a send, in the order given.
    pub(super) async fn mention_jids(&self, mentions: &[String]) -> Vec<String> {
        let mut known = Vec::with_capacity(mentions.len());
        let mut unknown: Vec<(usize, Jid)> = Vec::new();
        for (i, user) in mentions.iter().enumerate() {
            known.push(self.known(user).await);
            if known[i] == Known::Nothing
                && !user.contains('@')
                && user.len() <= LONGEST_PHONE
                && let Ok(pn) = format!("{user}@s.whatsapp.net").parse::<Jid>()
            {
                unknown.push((i, pn));
            }
        }
        if !unknown.is_empty() {
            let phones: Vec<Jid> = unknown.iter().map(|(_, j)| j.clone()).collect();
            match self.client.contacts().is_on_whatsapp(&phones).await {
                Ok(answers) => {
                    for (i, pn) in &unknown {
                        let answer = answers.iter().find(|a| {
                            a.jid.user == pn.user
                                || a.pn_jid.as_ref().is_some_and(|p| p.user == pn.user)
                        });
                        known[*i] = match answer {
                            Some(a) if a.is_registered => {
                                let lid = a.lid.as_ref().or(a.jid.is_lid().then_some(&a.jid));
                                Known::Phone(lid.map(|l| l.user.to_string()))
                            }
                            _ => Known::NotAPhone,
                        };
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "mentions not checked; taken as phone numbers");
                }
            }
        }
        mentions
            .iter()
            .zip(&known)
            .map(|(user, k)| mention_jid(user, k))
            .collect()
    }

    /// What the stored LID <-> phone mapping says of a bare `user`
    /// (nothing of a full JID, which is mentioned as given).
    async fn known(&self, user: &str) -> Known {
        if user.contains('@') {
            return Known::Nothing;
        }
        let entry = |server: &str| {
            let raw = format!("{user}@{server}");
            async move {
                let parsed: Jid = raw.parse().ok()?;
                self.client.get_lid_pn_entry(&parsed).await.ok()?
            }
        };
        if entry("lid").await.is_some() {
            return Known::Lid;
        }
        match entry("s.whatsapp.net").await {
            Some(e) => Known::Phone(Some(e.lid.to_string())),
            None => Known::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_user_parts_become_the_jid_the_mapping_points_to() {
        let lid = "123456789012345";
        let phone = "4915112345678";
        assert_eq!(mention_jid(lid, &Known::Lid), "123456789012345@lid");
        assert_eq!(
            mention_jid(phone, &Known::Phone(Some("987654321098765".into()))),
            "987654321098765@lid"
        );
        assert_eq!(
            mention_jid(phone, &Known::Phone(None)),
            "4915112345678@s.whatsapp.net"
        );
        assert_eq!(mention_jid(lid, &Known::NotAPhone), "123456789012345@lid");
        // Unknown and unchecked: too long for a phone number means a LID.
        assert_eq!(
            mention_jid("12345678901234567", &Known::Nothing),
            "12345678901234567@lid"
        );
        assert_eq!(
            mention_jid(phone, &Known::Nothing),
            "4915112345678@s.whatsapp.net"
        );
        // A full JID is kept as given.
        assert_eq!(mention_jid("5@g.us", &Known::Nothing), "5@g.us");
    }
}
