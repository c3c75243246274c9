//! Token dictionaries. Binary nodes name their frequent strings by index
//! into a dictionary whose version the client announces in its connection
//! header (`WA 6 3` for whatsapp-rust, `WA 6 2` for Baileys 6.x). The
//! server's codec is wacore-binary's (version 3); for a client of another
//! version its frames are rewritten token by token on the way in and out,
//! as the network's own server speaks each client's version. Strings the
//! other dictionary lacks become raw strings, which every decoder reads.
use std::collections::HashMap;

use anyhow::{Context, anyhow, bail, ensure};
use whatsapp_rust::wacore_binary::marshal::unmarshal_ref;

const LIST_EMPTY: u8 = 0;
const DICTIONARY_0: u8 = 236;
const DICTIONARY_3: u8 = 239;
const AD_JID: u8 = 247;
const LIST_8: u8 = 248;
const LIST_16: u8 = 249;
const JID_PAIR: u8 = 250;
const HEX_8: u8 = 251;
const BINARY_8: u8 = 252;
const BINARY_20: u8 = 253;
const BINARY_32: u8 = 254;
const NIBBLE_8: u8 = 255;

/// One dictionary: single-byte tokens (index 0 unused) and four pages of
/// double-byte ones.
pub struct Dictionary {
    single: Vec<String>,
    double: Vec<Vec<String>>,
    index: HashMap<String, (Option<u8>, u8)>,
}

impl Dictionary {
    pub fn new(single: Vec<String>, double: Vec<Vec<String>>) -> anyhow::Result<Self> {
        ensure!(
            single.len() <= usize::from(DICTIONARY_0),
            "{} single tokens",
            single.len()
        );
        ensure!(double.len() <= 4, "{} double-token pages", double.len());
        let mut index = HashMap::new();
        for (page, tokens) in double.iter().enumerate() {
            for (i, t) in tokens.iter().enumerate() {
                let i = u8::try_from(i).map_err(|_| anyhow!("page {page} is too long"))?;
                index.insert(t.clone(), (Some(page as u8), i));
            }
        }
        for (i, t) in single.iter().enumerate().skip(1) {
            if !t.is_empty() {
                index.insert(t.clone(), (None, i as u8));
            }
        }
        Ok(Self {
            single,
            double,
            index,
        })
    }

    /// wacore-binary's own dictionary, read back through its decoder.
    pub fn ours() -> anyhow::Result<Self> {
        let read = |bytes: &[u8]| -> Option<String> {
            unmarshal_ref(bytes).ok().map(|n| n.tag.to_string())
        };
        let mut single = vec![String::new()];
        for i in 1..DICTIONARY_0 {
            single.push(read(&[LIST_8, 1, i]).unwrap_or_default());
        }
        let mut double = Vec::new();
        for page in 0..4u8 {
            let mut tokens = Vec::new();
            for i in 0..=255u8 {
                match read(&[LIST_8, 1, DICTIONARY_0 + page, i]) {
                    Some(t) if !t.is_empty() => tokens.push(t),
                    _ => break,
                }
            }
            double.push(tokens);
        }
        Self::new(single, double)
    }

    fn token(&self, tag: u8, r: &mut Reader<'_>) -> anyhow::Result<&str> {
        let t = if tag >= DICTIONARY_0 {
            let page = usize::from(tag - DICTIONARY_0);
            let i = usize::from(r.byte()?);
            self.double.get(page).and_then(|p| p.get(i))
        } else {
            self.single.get(usize::from(tag))
        };
        t.map(String::as_str)
            .ok_or_else(|| anyhow!("token {tag} unknown to the dictionary"))
    }

    fn write_token(&self, s: &str, out: &mut Vec<u8>) {
        match self.index.get(s) {
            Some((None, i)) => out.push(*i),
            Some((Some(page), i)) => out.extend([DICTIONARY_0 + page, *i]),
            None => raw(s.as_bytes(), out),
        }
    }
}

/// Rewrites frames between a client's dictionary and ours.
pub struct Transcoder {
    client: Dictionary,
    ours: Dictionary,
}

impl Transcoder {
    pub fn new(client: Dictionary) -> anyhow::Result<Self> {
        Ok(Self {
            client,
            ours: Dictionary::ours()?,
        })
    }

    /// A node from the client, in our dictionary.
    pub fn inbound(&self, node: &[u8]) -> anyhow::Result<Vec<u8>> {
        transcode(&self.client, &self.ours, node)
    }

    /// A node of ours, in the client's dictionary.
    pub fn outbound(&self, node: &[u8]) -> anyhow::Result<Vec<u8>> {
        transcode(&self.ours, &self.client, node)
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> anyhow::Result<u8> {
        let b = *self.data.get(self.at).context("the node ends early")?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> anyhow::Result<&[u8]> {
        let end = self.at.checked_add(n).context("length")?;
        let bytes = self.data.get(self.at..end).context("the node ends early")?;
        self.at = end;
        Ok(bytes)
    }

    fn peek(&self) -> anyhow::Result<u8> {
        self.data
            .get(self.at)
            .copied()
            .context("the node ends early")
    }
}

fn transcode(from: &Dictionary, to: &Dictionary, data: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut r = Reader { data, at: 0 };
    let mut out = Vec::with_capacity(data.len() + 16);
    node(from, to, &mut r, &mut out)?;
    ensure!(r.at == data.len(), "bytes after the node");
    Ok(out)
}

/// Copies a list header; returns the list's size.
fn list(r: &mut Reader<'_>, out: &mut Vec<u8>) -> anyhow::Result<usize> {
    let tag = r.byte()?;
    out.push(tag);
    Ok(match tag {
        LIST_EMPTY => 0,
        LIST_8 => {
            let n = r.byte()?;
            out.push(n);
            usize::from(n)
        }
        LIST_16 => {
            let n = r.take(2)?;
            out.extend_from_slice(n);
            usize::from(u16::from_be_bytes([n[0], n[1]]))
        }
        other => bail!("tag {other} is no list"),
    })
}

fn node(
    from: &Dictionary,
    to: &Dictionary,
    r: &mut Reader<'_>,
    out: &mut Vec<u8>,
) -> anyhow::Result<()> {
    let size = list(r, out)?;
    ensure!(size > 0, "an empty node");
    string(from, to, r, out)?;
    for _ in 0..(size - 1) / 2 {
        string(from, to, r, out)?;
        string(from, to, r, out)?;
    }
    if size % 2 == 0 {
        if matches!(r.peek()?, LIST_EMPTY | LIST_8 | LIST_16) {
            for _ in 0..list(r, out)? {
                node(from, to, r, out)?;
            }
        } else {
            string(from, to, r, out)?;
        }
    }
    Ok(())
}

fn string(
    from: &Dictionary,
    to: &Dictionary,
    r: &mut Reader<'_>,
    out: &mut Vec<u8>,
) -> anyhow::Result<()> {
    let tag = r.byte()?;
    match tag {
        LIST_EMPTY => out.push(LIST_EMPTY),
        1..DICTIONARY_0 | DICTIONARY_0..=DICTIONARY_3 => {
            let token = from.token(tag, r)?.to_string();
            to.write_token(&token, out);
        }
        AD_JID => {
            out.push(tag);
            out.extend_from_slice(r.take(2)?);
            string(from, to, r, out)?;
        }
        JID_PAIR => {
            out.push(tag);
            string(from, to, r, out)?;
            string(from, to, r, out)?;
        }
        HEX_8 | NIBBLE_8 => {
            out.push(tag);
            let head = r.byte()?;
            out.push(head);
            out.extend_from_slice(r.take(usize::from(head & 0x7f))?);
        }
        BINARY_8 => {
            let n = r.byte()?;
            out.extend([tag, n]);
            out.extend_from_slice(r.take(usize::from(n))?);
        }
        BINARY_20 => {
            let n = r.take(3)?;
            let len =
                (usize::from(n[0] & 0x0f) << 16) | (usize::from(n[1]) << 8) | usize::from(n[2]);
            out.push(tag);
            out.extend_from_slice(n);
            out.extend_from_slice(r.take(len)?);
        }
        BINARY_32 => {
            let n = r.take(4)?;
            let len = u32::from_be_bytes([n[0], n[1], n[2], n[3]]) as usize;
            out.push(tag);
            out.extend_from_slice(n);
            out.extend_from_slice(r.take(len)?);
        }
        other => bail!("string tag {other} is not handled"),
    }
    Ok(())
}

/// A raw string or byte run.
fn raw(bytes: &[u8], out: &mut Vec<u8>) {
    let len = bytes.len();
    if len < 256 {
        out.extend([BINARY_8, len as u8]);
    } else if len < 1 << 20 {
        out.extend([
            BINARY_20,
            (len >> 16) as u8 & 0x0f,
            (len >> 8) as u8,
            len as u8,
        ]);
    } else {
        out.push(BINARY_32);
        out.extend((len as u32).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use whatsapp_rust::wacore_binary::marshal::marshal;
    use whatsapp_rust::wacore_binary::node::Node;

    use crate::nodes::element;

    /// A dictionary with the same strings at other places, and some missing.
    fn shuffled() -> Dictionary {
        let ours = Dictionary::ours().unwrap();
        let mut single: Vec<String> = ours.single.clone();
        single[1..].reverse();
        single.truncate(150);
        Dictionary::new(single, vec![ours.double[1].clone(), ours.double[0].clone()]).unwrap()
    }

    fn sample() -> Node {
        let mut n = element(
            "message",
            &[
                ("to", "4915100000402@s.whatsapp.net".into()),
                ("participant", "100000000000001:3@lid".into()),
                ("id", "3EB0ABCDEF".into()),
                ("type", "text".into()),
            ],
            vec![crate::nodes::leaf_bytes("enc", vec![7u8; 300])],
        );
        n.attrs.insert("t", "1795597099");
        n
    }

    #[test]
    fn a_node_survives_the_trip_through_another_dictionary() {
        let t = Transcoder::new(shuffled()).unwrap();
        let ours = marshal(&sample()).unwrap();
        let plain = &ours[1..]; // the flag byte
        let theirs = t.outbound(plain).unwrap();
        assert_ne!(theirs, plain, "the tokens moved");
        let back = t.inbound(&theirs).unwrap();
        let node = unmarshal_ref(&back).unwrap().to_owned();
        assert_eq!(marshal(&node).unwrap(), ours, "the same node");
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let t = Transcoder::new(shuffled()).unwrap();
        let ours = marshal(&sample()).unwrap();
        for cut in 1..ours.len() - 1 {
            assert!(t.inbound(&ours[1..cut]).is_err(), "cut at {cut}");
        }
    }
}
