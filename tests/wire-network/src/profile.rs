//! Profiles: an account's about text and picture, as others see them. The
//! picture sits on the CDN stand-in under a signed URL; `w:profile:picture`
//! answers with it (401 when hidden, or shown to the owner's contacts only
//! and asked without a token the owner issued; 404 when there is none), and usync's
//! `status`, `picture` and `username` parts name the text, the picture id
//! and the handle.
use std::sync::atomic::Ordering;

use whatsapp_rust::wacore_binary::node::Node;

use crate::Inner;
use crate::iq::Asker;
use crate::nodes::{attr, child, child_bytes, element, iq_error, iq_result, leaf_bytes};
use crate::registry::{Account, Picture, split_jid};

/// A profile picture, as its owner sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Avatar {
    None,
    /// Set, but shown to no one else.
    Hidden,
    /// An image's bytes.
    Image(Vec<u8>),
}

impl Inner {
    /// A new picture's id: as the network's, the second it was set (ten
    /// digits), one more than the last when two come in the same second.
    fn next_picture_id(&self) -> u64 {
        let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap_or_default();
        let after = |last: u64| Ord::max(now, last + 1);
        let last = self
            .last_picture
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| Some(after(last)))
            .unwrap_or_default();
        after(last)
    }

    /// `phone` (registered if it was not) shows `about` and `avatar`; a new
    /// image gets a new id, and the old one leaves the CDN.
    pub(crate) fn set_profile(&self, phone: &str, about: &str, avatar: Avatar) {
        let id = self.next_picture_id();
        let mut reg = self.registry();
        let account = reg.account(phone);
        account.about = about.to_string();
        if let Picture::Shown { direct_path, .. } = &account.picture {
            self.shelf.withdraw(direct_path);
        }
        account.picture = match avatar {
            Avatar::None => Picture::None,
            Avatar::Hidden => Picture::Hidden,
            Avatar::Image(data) => {
                let direct_path = format!("/v/t61.pp/{}/{id}.jpg", account.lid);
                let url = self.shelf.publish(&direct_path, data);
                Picture::Shown {
                    id,
                    url,
                    direct_path,
                }
            }
        };
        drop(reg);
        self.changed.notify_waiters();
    }
}

/// `<iq xmlns="w:profile:picture" type="get" target=..>`: the target's
/// picture. One shown to its owner's contacts only needs, in the request's
/// `<picture>`, a `<tctoken>` the owner issued the asker (whatsapp-rust
/// `features/contacts.rs` attaches it when the props say so); 401 otherwise.
pub fn picture(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    let Some(target) = attr(iq, "target") else {
        return iq_error(id, 400, "bad-request");
    };
    let asked = child(iq, "picture");
    let kind = asked
        .and_then(|p| attr(p, "type"))
        .unwrap_or_else(|| "preview".into());
    let token = asked.and_then(|p| child_bytes(p, "tctoken"));
    let (user, _, server) = split_jid(&target);
    let reg = inner.registry();
    let Some((owner, account)) = reg
        .phone_of(&user, &server)
        .and_then(|phone| reg.accounts.get(&phone).map(|a| (phone, a)))
    else {
        return iq_error(id, 404, "item-not-found");
    };
    let shown_to_asker = !account.picture_for_contacts
        || owner == who.phone
        || reg.tokens.trusts(token, &owner, who.phone);
    match &account.picture {
        Picture::Shown { .. } if !shown_to_asker => iq_error(id, 401, "not-authorized"),
        Picture::Shown {
            id: picture,
            url,
            direct_path,
        } => iq_result(
            id,
            vec![element(
                "picture",
                &[
                    ("id", picture.to_string()),
                    ("type", kind),
                    ("url", url.clone()),
                    ("direct_path", direct_path.clone()),
                ],
                vec![],
            )],
        ),
        Picture::Hidden => iq_error(id, 401, "not-authorized"),
        Picture::None => iq_error(id, 404, "item-not-found"),
    }
}

/// usync's `status` part: the about text.
pub fn status(account: &Account) -> Node {
    leaf_bytes("status", account.about.as_bytes().to_vec())
}

/// usync's `username` part: the account's handle as text, empty without one.
pub fn username(account: &Account) -> Node {
    if account.username.is_empty() {
        element("username", &[], vec![])
    } else {
        leaf_bytes("username", account.username.as_bytes().to_vec())
    }
}

/// usync's `picture` part: the visible picture's id, or the reason there is
/// none. A picture for the owner's contacts only shows to an asker the
/// owner issued a privacy token (`trusted`): a usync query carries no
/// token, so the server answers from the tokens it minted.
pub fn picture_id(account: &Account, trusted: bool) -> Node {
    let error = |code: u16, text: &str| {
        let error = element(
            "error",
            &[("code", code.to_string()), ("text", text.into())],
            vec![],
        );
        element("picture", &[], vec![error])
    };
    match &account.picture {
        Picture::Shown { .. } if account.picture_for_contacts && !trusted => {
            error(401, "not-authorized")
        }
        Picture::Shown { id, .. } => element("picture", &[("id", id.to_string())], vec![]),
        Picture::Hidden => error(401, "not-authorized"),
        Picture::None => error(404, "item-not-found"),
    }
}
