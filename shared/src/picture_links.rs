//! The sandbox's stand-in for the network's picture CDN: signed links to a
//! contact's profile picture that anyone holding them may fetch (no account
//! token, like the network's own links) until they expire. The key lives in
//! the database, so a link made by one process is served by any other.
//!
//! A link is `<base>/sandbox/cdn/pictures/<lid>/<pictureId>.jpg?type=<preview
//! |image>&oe=<expiry, hex Unix seconds>&oh=<signature>`, the signature being
//! the hex HMAC-SHA256 of `<lid>/<pictureId>/<type>/<oe>`.
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Where the links are served.
pub const PATH: &str = "/sandbox/cdn/pictures";

/// How long a link is valid by default: about 10 days, like the network's.
pub const DEFAULT_TTL_SECS: u64 = 10 * 24 * 3600;

/// Why a link is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The signature does not match (or the link is malformed).
    Forged,
    /// Past its expiry.
    Expired,
}

/// What a link names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PictureRef {
    pub lid: String,
    pub picture_id: String,
    pub preview: bool,
}

/// Makes and checks links with one key.
#[derive(Clone)]
pub struct PictureLinks {
    key: Vec<u8>,
}

impl PictureLinks {
    pub fn new(key: &[u8]) -> PictureLinks {
        PictureLinks { key: key.to_vec() }
    }

    fn sign(&self, lid: &str, picture_id: &str, kind: &str, expires_hex: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(format!("{lid}/{picture_id}/{kind}/{expires_hex}").as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// A link under `base` to `picture`, valid until `expires` (Unix seconds).
    pub fn url(&self, base: &str, picture: &PictureRef, expires: i64) -> String {
        let kind = if picture.preview { "preview" } else { "image" };
        let oe = format!("{:X}", expires.max(0));
        let oh = self.sign(&picture.lid, &picture.picture_id, kind, &oe);
        format!(
            "{}{PATH}/{}/{}.jpg?type={kind}&oe={oe}&oh={oh}",
            base.trim_end_matches('/'),
            picture.lid,
            picture.picture_id
        )
    }

    /// Checks a request for `<lid>/<file>` with its query values at `now`
    /// (Unix seconds); the picture it names when the link is genuine and current.
    pub fn verify(
        &self,
        lid: &str,
        file: &str,
        kind: &str,
        oe: &str,
        oh: &str,
        now: i64,
    ) -> Result<PictureRef, Refused> {
        let picture_id = file.strip_suffix(".jpg").ok_or(Refused::Forged)?;
        let preview = match kind {
            "preview" => true,
            "image" => false,
            _ => return Err(Refused::Forged),
        };
        let expected = self.sign(lid, picture_id, kind, oe);
        let same: bool = subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), oh.as_bytes()).into();
        if !same {
            return Err(Refused::Forged);
        }
        let expires = i64::from_str_radix(oe, 16).map_err(|_| Refused::Forged)?;
        if now >= expires {
            return Err(Refused::Expired);
        }
        Ok(PictureRef {
            lid: lid.to_string(),
            picture_id: picture_id.to_string(),
            preview,
        })
    }

    /// The picture a link made by [`Self::url`] names (its signature unchecked:
    /// for the network side, which made it).
    pub fn parse(url: &str) -> Option<PictureRef> {
        let (_, rest) = url.split_once(PATH)?;
        let (path, query) = rest.strip_prefix('/')?.split_once('?')?;
        let (lid, file) = path.split_once('/')?;
        let picture_id = file.strip_suffix(".jpg")?;
        let preview = query.split('&').any(|kv| kv == "type=preview");
        (!lid.is_empty() && !picture_id.is_empty()).then(|| PictureRef {
            lid: lid.to_string(),
            picture_id: picture_id.to_string(),
            preview,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pic() -> PictureRef {
        PictureRef {
            lid: "123456789012345".into(),
            picture_id: "1700000000".into(),
            preview: true,
        }
    }

    fn parts(url: &str) -> (String, String, String, String, String) {
        let (path, query) = url.split_once('?').unwrap();
        let mut segs = path.rsplit('/');
        let file = segs.next().unwrap().to_string();
        let lid = segs.next().unwrap().to_string();
        let q = |k: &str| {
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                .unwrap()
                .to_string()
        };
        (lid, file, q("type"), q("oe"), q("oh"))
    }

    #[test]
    fn a_link_verifies_until_it_expires() {
        let links = PictureLinks::new(b"key one");
        let url = links.url("http://gw:8080/", &pic(), 1_000);
        assert!(url.starts_with("http://gw:8080/sandbox/cdn/pictures/123456789012345/1700000000.jpg?type=preview&oe=3E8&oh="));
        let (lid, file, kind, oe, oh) = parts(&url);
        assert_eq!(links.verify(&lid, &file, &kind, &oe, &oh, 999), Ok(pic()));
        assert_eq!(
            links.verify(&lid, &file, &kind, &oe, &oh, 1_000),
            Err(Refused::Expired)
        );
        assert_eq!(PictureLinks::parse(&url), Some(pic()));
    }

    #[test]
    fn any_change_or_another_key_is_forged() {
        let links = PictureLinks::new(b"key one");
        let url = links.url("http://gw", &pic(), 1_000);
        let (lid, file, kind, oe, oh) = parts(&url);
        let forged = |l: &str, f: &str, k: &str, e: &str, h: &str| links.verify(l, f, k, e, h, 0);
        assert_eq!(forged("999", &file, &kind, &oe, &oh), Err(Refused::Forged));
        assert_eq!(forged(&lid, "2.jpg", &kind, &oe, &oh), Err(Refused::Forged));
        assert_eq!(forged(&lid, &file, "image", &oe, &oh), Err(Refused::Forged));
        assert_eq!(
            forged(&lid, &file, &kind, "FFFFFFFF", &oh),
            Err(Refused::Forged)
        );
        assert_eq!(forged(&lid, &file, &kind, &oe, "00"), Err(Refused::Forged));
        assert_eq!(
            forged(&lid, "1700000000.png", &kind, &oe, &oh),
            Err(Refused::Forged)
        );
        let other = PictureLinks::new(b"key two");
        assert_eq!(
            other.verify(&lid, &file, &kind, &oe, &oh, 0),
            Err(Refused::Forged)
        );
    }
}
