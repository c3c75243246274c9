//! Media types of files to send: the type from an override, the response's
//! Content-Type or the file name's extension, and how a type is presented
//! (image, video, audio or voice note, sticker, document).
use crate::network::MediaKind;

/// When nothing better is known.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// Types that say nothing about the content.
const GENERIC: [&str; 3] = [OCTET_STREAM, "binary/octet-stream", "application/unknown"];

/// Extensions the gateway recognises.
const EXTENSIONS: &[(&str, &str)] = &[
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("png", "image/png"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("heic", "image/heic"),
    ("mp4", "video/mp4"),
    ("m4v", "video/mp4"),
    ("3gp", "video/3gpp"),
    ("mov", "video/quicktime"),
    ("webm", "video/webm"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("oga", "audio/ogg"),
    ("opus", "audio/ogg"),
    ("m4a", "audio/mp4"),
    ("aac", "audio/aac"),
    ("wav", "audio/wav"),
    ("amr", "audio/amr"),
    ("pdf", "application/pdf"),
    ("doc", "application/msword"),
    (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("xls", "application/vnd.ms-excel"),
    (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("ppt", "application/vnd.ms-powerpoint"),
    (
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    ("txt", "text/plain"),
    ("csv", "text/csv"),
    ("json", "application/json"),
    ("zip", "application/zip"),
];

/// `type/subtype` of a Content-Type value, lower case, without parameters.
pub fn essence(content_type: &str) -> Option<String> {
    let essence = content_type.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, sub) = essence.split_once('/')?;
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    (token(kind) && token(sub)).then_some(essence)
}

/// The type a file name's extension stands for.
pub fn from_extension(name: &str) -> Option<&'static str> {
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, mime)| *mime)
}

/// The type of a file: `mime_override`, else a specific response Content-Type,
/// else the extension of `name`, else the generic Content-Type, else octet-stream.
pub fn detect(mime_override: Option<&str>, header: Option<&str>, name: Option<&str>) -> String {
    if let Some(given) = mime_override.and_then(essence) {
        return given;
    }
    let header = header.and_then(essence);
    if let Some(h) = header.as_deref().filter(|h| !GENERIC.contains(h)) {
        return h.to_string();
    }
    if let Some(by_name) = name.and_then(from_extension) {
        return by_name.to_string();
    }
    header.unwrap_or_else(|| OCTET_STREAM.to_string())
}

/// How a file of type `mime` goes out: a sticker only for WebP with `sticker`.
pub fn kind(mime: &str, sticker: bool) -> MediaKind {
    if sticker && mime == "image/webp" {
        return MediaKind::Sticker;
    }
    match mime.split_once('/').map(|(t, _)| t) {
        Some("image") => MediaKind::Image,
        Some("video") => MediaKind::Video,
        Some("audio") => MediaKind::Audio,
        _ => MediaKind::Document,
    }
}

/// The last path segment of a URL, percent-decoded, when it looks like a file name.
pub fn file_name_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let last = parsed.path_segments()?.next_back()?;
    let decoded = percent_decode(last);
    (!decoded.is_empty() && decoded.len() <= 255).then_some(decoded)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_then_header_then_extension() {
        assert_eq!(
            detect(Some("Image/PNG"), Some("image/jpeg"), Some("a.gif")),
            "image/png"
        );
        assert_eq!(
            detect(None, Some("image/jpeg; charset=binary"), Some("a.gif")),
            "image/jpeg"
        );
        assert_eq!(
            detect(None, Some("application/octet-stream"), Some("a.PDF")),
            "application/pdf"
        );
        assert_eq!(detect(None, None, Some("voice.opus")), "audio/ogg");
        assert_eq!(
            detect(None, Some("binary/octet-stream"), Some("blob")),
            "binary/octet-stream"
        );
        assert_eq!(detect(Some("nonsense"), None, None), OCTET_STREAM);
    }

    #[test]
    fn kinds_follow_the_type_and_the_sticker_flag() {
        assert_eq!(kind("image/jpeg", false), MediaKind::Image);
        assert_eq!(kind("image/webp", true), MediaKind::Sticker);
        assert_eq!(
            kind("image/png", true),
            MediaKind::Image,
            "only WebP becomes a sticker"
        );
        assert_eq!(kind("video/mp4", false), MediaKind::Video);
        assert_eq!(kind("audio/ogg", false), MediaKind::Audio);
        assert_eq!(kind("application/pdf", false), MediaKind::Document);
        assert_eq!(kind("text/plain", false), MediaKind::Document);
    }

    #[test]
    fn file_names_come_from_the_last_path_segment() {
        assert_eq!(
            file_name_of("https://cdn.example/files/Report%202024.pdf?sig=1").as_deref(),
            Some("Report 2024.pdf")
        );
        assert_eq!(file_name_of("https://cdn.example/"), None);
        assert_eq!(file_name_of("not a url"), None);
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("a%zz"), "a%zz");
    }
}
