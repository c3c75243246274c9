//! The LID of an account known by its phone JID: from the library's LID/PN
//! store when the session met it before, else from a number check on the
//! network (as a phone resolves a new contact).
use whatsapp_rust::{Client, Jid};

/// `pn`'s LID user-part; `None` for a number nobody registered. The error
/// says which step failed.
pub async fn lid_of(client: &Client, pn: &Jid) -> Result<Option<String>, String> {
    let entry = client
        .get_lid_pn_entry(pn)
        .await
        .map_err(|e| e.to_string())?;
    if let Some(entry) = entry {
        return Ok(Some(entry.lid.to_string()));
    }
    let answers = client
        .contacts()
        .is_on_whatsapp(std::slice::from_ref(pn))
        .await
        .map_err(|e| e.to_string())?;
    Ok(answers
        .into_iter()
        .filter(|a| a.is_registered)
        .find_map(|a| a.lid)
        .map(|lid| lid.user.to_string()))
}
