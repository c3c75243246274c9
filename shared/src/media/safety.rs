//! What a stored file may do in a browser. Files come from contacts, customers
//! and URLs, none of them trusted, and are served from the gateway's origin
//! (`parley serve`) or a bucket: only raster images, audio and video are shown
//! inline; everything else is a download, and types a browser would run or
//! render as a document (HTML, SVG, XML, scripts) are served as opaque bytes.

/// The header every served file carries: no script, no plugins, no
/// same-origin access, whatever the bytes are.
pub const CONTENT_SECURITY_POLICY: &str = "sandbox";

/// The lowercase `type/subtype` of a declared content type, if it is one.
fn essence(declared: &str) -> Option<String> {
    let essence = declared.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, sub) = essence.split_once('/')?;
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    (token(kind) && token(sub)).then_some(essence)
}

/// Whether a file of this type is shown in the browser rather than downloaded.
pub fn is_inline(declared: &str) -> bool {
    let Some(essence) = essence(declared) else {
        return false;
    };
    matches!(
        essence.as_str(),
        "image/jpeg" | "image/png" | "image/gif" | "image/webp" | "image/avif" | "image/bmp"
    ) || essence.starts_with("audio/")
        || essence.starts_with("video/")
}

/// Types a browser runs or renders as a document of the origin.
fn is_active(essence: &str) -> bool {
    let (kind, sub) = essence.split_once('/').unwrap_or((essence, ""));
    (kind == "text" && sub != "plain" && sub != "csv" && sub != "vcard" && sub != "x-vcard")
        || sub.ends_with("+xml")
        || sub == "xml"
        || sub.contains("javascript")
        || sub.contains("ecmascript")
        || sub.contains("html")
        || sub == "x-shockwave-flash"
        || kind == "multipart"
}

/// The content type a file is stored and served with: the declared one
/// (its type lowercased, its parameters kept when printable), unless it is
/// malformed or a type a browser would run, which become
/// `application/octet-stream`.
pub fn served_type(declared: &str) -> String {
    match essence(declared) {
        Some(essence) if !is_active(&essence) => match declared.split_once(';') {
            Some((_, params)) if params.bytes().all(|b| (0x20..0x7f).contains(&b)) => {
                format!("{essence};{params}")
            }
            _ => essence,
        },
        _ => "application/octet-stream".to_string(),
    }
}

/// The `Content-Disposition` a file is served with.
pub fn disposition(declared: &str) -> &'static str {
    if is_inline(declared) {
        "inline"
    } else {
        "attachment"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_sound_and_video_show_inline() {
        for t in [
            "image/png",
            "IMAGE/JPEG",
            "image/webp; q=1",
            "audio/ogg; codecs=opus",
            "video/mp4",
        ] {
            assert!(is_inline(t), "{t}");
            assert_eq!(disposition(t), "inline", "{t}");
        }
    }

    #[test]
    fn everything_else_downloads() {
        for t in [
            "text/html",
            "image/svg+xml",
            "application/pdf",
            "text/plain",
            "application/octet-stream",
            "",
            "nonsense",
        ] {
            assert!(!is_inline(t), "{t}");
            assert_eq!(disposition(t), "attachment", "{t}");
        }
    }

    #[test]
    fn active_types_are_served_as_bytes() {
        for t in [
            "text/html",
            "text/html; charset=utf-8",
            "application/xhtml+xml",
            "image/svg+xml",
            "text/xml",
            "application/xml",
            "text/javascript",
            "application/javascript",
            "application/x-shockwave-flash",
            "multipart/related",
            "text/html\r\nSet-Cookie: a=b",
            "image/png, text/html",
            "",
        ] {
            assert_eq!(served_type(t), "application/octet-stream", "{t:?}");
        }
        assert_eq!(served_type("application/pdf"), "application/pdf");
        assert_eq!(served_type("Image/PNG; x=y"), "image/png; x=y");
        assert_eq!(
            served_type("text/plain; charset=utf-8"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(served_type("text/plain; x=\u{7}"), "text/plain");
    }
}
