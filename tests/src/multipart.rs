//! `multipart/form-data` bodies for the media upload route.

/// One part of a multipart form: a text field, or a file with its type.
pub enum Part<'a> {
    Text(&'a str, &'a str),
    File {
        name: &'a str,
        file_name: &'a str,
        content_type: &'a str,
        data: &'a [u8],
    },
}

/// A `multipart/form-data` body: `(content type, body)`.
pub fn multipart(parts: &[Part<'_>]) -> (String, Vec<u8>) {
    let boundary = "parley-test-boundary-7d1c";
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match part {
            Part::Text(name, value) => {
                body.extend_from_slice(
                    format!("content-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                        .as_bytes(),
                );
            }
            Part::File {
                name,
                file_name,
                content_type,
                data,
            } => {
                body.extend_from_slice(
                    format!(
                        "content-disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\ncontent-type: {content_type}\r\n\r\n"
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(data);
                body.extend_from_slice(b"\r\n");
            }
        }
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Posts `parts` as a multipart form to `url` with bearer `token`; returns
/// the status and the JSON answer (a JSON string when the body is not JSON).
pub async fn upload_form(url: &str, token: &str, parts: &[Part<'_>]) -> (u16, serde_json::Value) {
    let (content_type, body) = multipart(parts);
    let res = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    (status, value)
}
