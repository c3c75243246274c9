//! Standard Webhooks signatures: `v1,<base64 HMAC-SHA256(id.timestamp.body)>`, keyed
//! by the session's webhook token (its UTF-8 bytes; verifiers take the secret
//! `whsec_` + base64(token)).
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub fn signature(token: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(token.as_bytes()) {
        Ok(mac) => mac,
        // HMAC accepts keys of any length; this arm cannot be reached.
        Err(_) => return String::new(),
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let tag = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_standard_webhooks_verifier_accepts_the_signature() {
        let token = "a-webhook-token-of-at-least-32-chars!";
        let body = br#"{"type":"text"}"#;
        let now = chrono::Utc::now().timestamp();
        let sig = super::signature(token, "msg_1", now, body);
        let mut headers = http::HeaderMap::new();
        headers.insert("webhook-id", "msg_1".parse().unwrap());
        headers.insert("webhook-timestamp", now.to_string().parse().unwrap());
        headers.insert("webhook-signature", sig.parse().unwrap());
        let verifier = standardwebhooks::Webhook::from_bytes(token.as_bytes().to_vec()).unwrap();
        verifier.verify(body, &headers).expect("signature accepted");
        let tampered = br#"{"type":"tex"}"#;
        assert!(verifier.verify(tampered, &headers).is_err());
    }
}
