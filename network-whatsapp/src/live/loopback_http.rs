//! Test builds only: the media HTTP client towards a test network's CDN.
//! The library always asks `https://{host}` of the hosts `media_conn` names;
//! a test network serves its CDN as plain HTTP on loopback, so requests to a
//! loopback host go out as `http://`. Every other URL is left alone.
use async_trait::async_trait;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
use whatsapp_rust::wacore::net::{StreamingHttpResponse, UploadBody};

/// Wraps an HTTP client; requests to `https://` loopback hosts use `http://`.
#[derive(Clone)]
pub struct LoopbackHttp<C>(pub C);

/// `url` with `https://` turned into `http://` when its host is on loopback.
pub fn plain_on_loopback(url: &str) -> String {
    let Some(rest) = url.strip_prefix("https://") else {
        return url.to_string();
    };
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        format!("http://{rest}")
    } else {
        url.to_string()
    }
}

fn rewritten(mut request: HttpRequest) -> HttpRequest {
    request.url = plain_on_loopback(&request.url);
    request
}

#[async_trait]
impl<C: HttpClient> HttpClient for LoopbackHttp<C> {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        self.0.execute(rewritten(request)).await
    }

    fn supports_streaming(&self) -> bool {
        self.0.supports_streaming()
    }

    fn execute_streaming(&self, request: HttpRequest) -> anyhow::Result<StreamingHttpResponse> {
        self.0.execute_streaming(rewritten(request))
    }

    fn supports_upload_streaming(&self) -> bool {
        self.0.supports_upload_streaming()
    }

    fn execute_upload(
        &self,
        request: HttpRequest,
        body: UploadBody,
        content_length: u64,
    ) -> anyhow::Result<HttpResponse> {
        self.0
            .execute_upload(rewritten(request), body, content_length)
    }
}

#[cfg(test)]
mod tests {
    use super::plain_on_loopback;

    #[test]
    fn only_loopback_hosts_go_plain() {
        assert_eq!(
            plain_on_loopback("https://127.0.0.1:4000/mms/image/x?auth=a"),
            "http://127.0.0.1:4000/mms/image/x?auth=a"
        );
        assert_eq!(
            plain_on_loopback("https://[::1]:9/v/t"),
            "http://[::1]:9/v/t"
        );
        assert_eq!(
            plain_on_loopback("https://localhost/v"),
            "http://localhost/v"
        );
        for kept in [
            "https://mmg.whatsapp.net/v/t62?auth=a",
            "https://10.0.0.1:443/x",
            "https://127.0.0.1.example.com/x",
            "http://127.0.0.1:1/x",
        ] {
            assert_eq!(plain_on_loopback(kept), kept);
        }
    }
}
