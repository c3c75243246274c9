//! What a test device sends besides text: files of every kind (uploaded
//! encrypted to the CDN stand-in), locations, contact cards, reactions,
//! edits, revokes, poll votes and button taps; a group's new subject; and
//! the download of a file it received. Each is what the official clients put on the wire, built
//! with whatsapp-rust's own helpers where it has them.
use anyhow::{Context, anyhow};
use parley_model::inbound::GroupSetting;
use whatsapp_rust::buffa::MessageField;
use whatsapp_rust::download::{Downloadable, MediaType};
use whatsapp_rust::send::RevokeType;
use whatsapp_rust::waproto::whatsapp as wa;
use whatsapp_rust::{GroupError, Jid, PreviousDescription, UploadOptions};

use crate::devices::{Received, TestDevice};

/// A kind of file a device can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Image,
    Video,
    Audio,
    /// An audio message played as a voice note (`ptt`).
    Voice,
    Document,
    Sticker,
}

impl FileKind {
    pub const ALL: [FileKind; 6] = [
        FileKind::Image,
        FileKind::Video,
        FileKind::Audio,
        FileKind::Voice,
        FileKind::Document,
        FileKind::Sticker,
    ];

    /// The kind a message `type` of the sandbox contract names (`image`,
    /// `video`, `audio`, `document`, `sticker`).
    pub fn of_type(kind: &str) -> Option<FileKind> {
        Some(match kind {
            "image" => FileKind::Image,
            "video" => FileKind::Video,
            "audio" => FileKind::Audio,
            "document" => FileKind::Document,
            "sticker" => FileKind::Sticker,
            _ => return None,
        })
    }

    fn media_type(self) -> MediaType {
        match self {
            FileKind::Image => MediaType::Image,
            FileKind::Video => MediaType::Video,
            FileKind::Audio | FileKind::Voice => MediaType::Audio,
            FileKind::Document => MediaType::Document,
            FileKind::Sticker => MediaType::Sticker,
        }
    }
}

/// A file to send.
#[derive(Debug, Clone)]
pub struct File<'a> {
    pub kind: FileKind,
    pub data: &'a [u8],
    pub mime: &'a str,
    pub caption: Option<&'a str>,
    pub file_name: Option<&'a str>,
}

fn jid(s: &str) -> anyhow::Result<Jid> {
    s.parse().map_err(|e| anyhow!("{s}: {e}"))
}

/// The message carrying an uploaded file.
fn file_message(file: &File<'_>, up: whatsapp_rust::upload::UploadResponse) -> wa::Message {
    macro_rules! fill {
        ($t:ty, $extra:expr) => {
            <$t>::default_with(|m: &mut $t| {
                m.url = Some(up.url.clone());
                m.direct_path = Some(up.direct_path.clone());
                m.media_key = Some(up.media_key.to_vec());
                m.file_enc_sha256 = Some(up.file_enc_sha256.to_vec());
                m.file_sha256 = Some(up.file_sha256.to_vec());
                m.file_length = Some(up.file_length);
                m.media_key_timestamp = Some(up.media_key_timestamp);
                m.mimetype = Some(file.mime.to_string());
                let extra: &dyn Fn(&mut $t) = &$extra;
                extra(m);
            })
        };
    }
    let caption = file.caption.map(str::to_string);
    let mut message = wa::Message::default();
    match file.kind {
        FileKind::Image => {
            message.image_message = MessageField::some(fill!(wa::message::ImageMessage, |m| {
                m.caption = caption.clone()
            }))
        }
        FileKind::Video => {
            message.video_message = MessageField::some(fill!(wa::message::VideoMessage, |m| {
                m.caption = caption.clone()
            }))
        }
        FileKind::Audio | FileKind::Voice => {
            message.audio_message = MessageField::some(fill!(wa::message::AudioMessage, |m| {
                m.ptt = Some(file.kind == FileKind::Voice)
            }))
        }
        FileKind::Document => {
            message.document_message =
                MessageField::some(fill!(wa::message::DocumentMessage, |m| {
                    m.caption = caption.clone();
                    m.file_name = file.file_name.map(str::to_string);
                }))
        }
        FileKind::Sticker => {
            message.sticker_message = MessageField::some(fill!(wa::message::StickerMessage, |_| {}))
        }
    }
    message
}

/// Uploads `file` (encrypted, to the CDN) as `client`, and returns the
/// message that carries it.
pub(crate) async fn upload(
    client: &whatsapp_rust::Client,
    file: &File<'_>,
) -> anyhow::Result<wa::Message> {
    let up = client
        .upload(
            file.data.to_vec(),
            file.kind.media_type(),
            UploadOptions::default(),
        )
        .await
        .map_err(|e| anyhow!("upload: {e}"))?;
    Ok(file_message(file, up))
}

/// Builds a default value and lets `f` fill it (keeps `fill!` one expression).
trait DefaultWith: Default {
    fn default_with(f: impl FnOnce(&mut Self)) -> Self {
        let mut v = Self::default();
        f(&mut v);
        v
    }
}
impl<T: Default> DefaultWith for T {}

/// The file a received message carries, if any.
pub fn received_file(r: &Received) -> Option<&dyn Downloadable> {
    let m = &r.message;
    if let Some(x) = m.image_message.as_option() {
        return Some(x);
    }
    if let Some(x) = m.video_message.as_option() {
        return Some(x);
    }
    if let Some(x) = m.audio_message.as_option() {
        return Some(x);
    }
    if let Some(x) = m.document_message.as_option() {
        return Some(x);
    }
    m.sticker_message
        .as_option()
        .map(|x| x as &dyn Downloadable)
}

impl TestDevice {
    /// Uploads `file` (encrypted, to the CDN) and sends it to `to`; returns
    /// the message id.
    pub async fn send_file(&self, to: &str, file: &File<'_>) -> anyhow::Result<String> {
        let message = self.upload_file(file).await?;
        self.send(to, message).await
    }

    /// Uploads `file` (encrypted, to the CDN) and returns the message that
    /// carries it, to be sent.
    pub async fn upload_file(&self, file: &File<'_>) -> anyhow::Result<wa::Message> {
        upload(&self.client, file)
            .await
            .with_context(|| format!("upload from {}", self.phone))
    }

    /// Sends `message` to `to` under the id `id` when one is given; returns
    /// the message id.
    pub async fn send_as(
        &self,
        to: &str,
        message: wa::Message,
        id: Option<&str>,
    ) -> anyhow::Result<String> {
        let mut options = whatsapp_rust::send::SendOptions::default();
        if let Some(id) = id {
            options = options.with_message_id(id);
        }
        let sent = self
            .client
            .send_message_with_options(jid(to)?, message, options)
            .await
            .map_err(|e| anyhow!("send from {}: {e}", self.phone))?;
        Ok(sent.message_id.to_string())
    }

    /// Sends a poll; returns its id.
    pub async fn send_poll(
        &self,
        to: &str,
        name: &str,
        options: &[String],
        selectable: u32,
    ) -> anyhow::Result<String> {
        let (sent, secret) = self
            .client
            .polls()
            .create(jid(to)?, name, options, selectable)
            .await
            .map_err(|e| anyhow!("poll from {}: {e}", self.phone))?;
        let id = sent.message_id.to_string();
        self.created_poll(&id, to, secret);
        Ok(id)
    }

    /// Sends an image; returns the message id.
    pub async fn send_image(&self, to: &str, data: &[u8], mime: &str) -> anyhow::Result<String> {
        let file = File {
            kind: FileKind::Image,
            data,
            mime,
            caption: None,
            file_name: None,
        };
        self.send_file(to, &file).await
    }

    /// Downloads and decrypts the file a received message carries.
    pub async fn download(&self, r: &Received) -> anyhow::Result<Vec<u8>> {
        let file = received_file(r).with_context(|| format!("{} carries no file", r.id))?;
        self.client
            .download(file)
            .await
            .map_err(|e| anyhow!("download on {}: {e}", self.phone))
    }

    /// Sends `message` to `to` as it is; returns the message id.
    pub async fn send(&self, to: &str, message: wa::Message) -> anyhow::Result<String> {
        let sent = self
            .client
            .send_message(jid(to)?, message)
            .await
            .map_err(|e| anyhow!("send from {}: {e}", self.phone))?;
        Ok(sent.message_id.to_string())
    }

    /// Sends a pinned location.
    pub async fn send_location(
        &self,
        to: &str,
        latitude: f64,
        longitude: f64,
        name: &str,
    ) -> anyhow::Result<String> {
        let location = wa::message::LocationMessage {
            degrees_latitude: Some(latitude),
            degrees_longitude: Some(longitude),
            name: Some(name.to_string()),
            ..Default::default()
        };
        let message = wa::Message {
            location_message: MessageField::some(location),
            ..Default::default()
        };
        self.send(to, message).await
    }

    /// Shares a contact card.
    pub async fn send_contact_card(
        &self,
        to: &str,
        display_name: &str,
        vcard: &str,
    ) -> anyhow::Result<String> {
        let card = wa::message::ContactMessage {
            display_name: Some(display_name.to_string()),
            vcard: Some(vcard.to_string()),
            ..Default::default()
        };
        let message = wa::Message {
            contact_message: MessageField::some(card),
            ..Default::default()
        };
        self.send(to, message).await
    }

    /// Reacts with `emoji` to `target` in the chat with `to`; `target_from_me`
    /// says whether this device sent the target. Returns the reaction's id.
    pub async fn react(
        &self,
        to: &str,
        target: &str,
        target_from_me: bool,
        emoji: &str,
    ) -> anyhow::Result<String> {
        let key = wa::MessageKey {
            remote_jid: Some(to.to_string()),
            from_me: Some(target_from_me),
            id: Some(target.to_string()),
            ..Default::default()
        };
        let sent = self
            .client
            .send_reaction(jid(to)?, key, emoji)
            .await
            .map_err(|e| anyhow!("react from {}: {e}", self.phone))?;
        Ok(sent.message_id.to_string())
    }

    /// Edits this device's own text `target` to `body` (the edit gets an id
    /// of its own, which the library does not return).
    pub async fn edit(&self, to: &str, target: &str, body: &str) -> anyhow::Result<()> {
        let new = wa::Message {
            conversation: Some(body.to_string()),
            ..Default::default()
        };
        self.client
            .edit_message(jid(to)?, target, new)
            .await
            .map(drop)
            .map_err(|e| anyhow!("edit from {}: {e}", self.phone))
    }

    /// Deletes this device's own message `target` for everyone.
    pub async fn revoke(&self, to: &str, target: &str) -> anyhow::Result<()> {
        self.client
            .revoke_message(jid(to)?, target, RevokeType::Sender)
            .await
            .map_err(|e| anyhow!("revoke from {}: {e}", self.phone))
    }

    /// Votes `options` on the poll `poll` (as received) in the chat with `to`,
    /// whose creator is `creator`. Returns the vote's id.
    pub async fn vote(
        &self,
        to: &str,
        poll: &Received,
        creator: &str,
        options: &[&str],
    ) -> anyhow::Result<String> {
        let secret = poll
            .secret
            .as_deref()
            .with_context(|| format!("poll {} came without its secret", poll.id))?;
        let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        let sent = self
            .client
            .polls()
            .vote(jid(to)?, &poll.id, &jid(creator)?, secret, &options)
            .await
            .map_err(|e| anyhow!("vote from {}: {e}", self.phone))?;
        Ok(sent.message_id.to_string())
    }

    /// Changes `setting` of group `group` (its full JID): the library's
    /// error as it comes, so a caller sees the server's code.
    pub async fn set_group_setting(
        &self,
        group: &str,
        setting: &GroupSetting,
    ) -> Result<(), GroupError> {
        let target = jid(group).map_err(GroupError::Internal)?;
        let groups = self.client.groups();
        match setting {
            GroupSetting::Subject(subject) => {
                let subject = whatsapp_rust::GroupSubject::new(subject)
                    .map_err(|e| GroupError::InvalidRequest(e.to_string()))?;
                groups.set_subject(target, subject).await
            }
            GroupSetting::Description(text) => {
                let description = match text.as_str() {
                    "" => None,
                    text => Some(
                        whatsapp_rust::GroupDescription::new(text)
                            .map_err(|e| GroupError::InvalidRequest(e.to_string()))?,
                    ),
                };
                groups
                    .set_description(target, description, PreviousDescription::Resolve)
                    .await
            }
            GroupSetting::Announce(on) => groups.set_announce(target, *on).await,
            GroupSetting::Locked(on) => groups.set_locked(target, *on).await,
            GroupSetting::Ephemeral(seconds) => groups.set_ephemeral(target, *seconds).await,
        }
    }

    /// Taps the button `button_id` (shown as `text`) of message `target`.
    pub async fn tap_button(
        &self,
        to: &str,
        target: &str,
        button_id: &str,
        text: &str,
    ) -> anyhow::Result<String> {
        use wa::message::buttons_response_message::{Response, Type};
        let tap = wa::message::ButtonsResponseMessage {
            selected_button_id: Some(button_id.to_string()),
            context_info: MessageField::some(wa::ContextInfo {
                stanza_id: Some(target.to_string()),
                participant: Some(to.to_string()),
                ..Default::default()
            }),
            r#type: Some(Type::DISPLAY_TEXT),
            response: Some(Response::SelectedDisplayText(text.to_string())),
        };
        let message = wa::Message {
            buttons_response_message: MessageField::some(tap),
            ..Default::default()
        };
        self.send(to, message).await
    }
}
