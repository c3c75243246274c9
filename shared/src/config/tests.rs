use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn defaults_without_anything() {
    let (c, warnings) = Config::load_from(&[]).unwrap();
    assert_eq!(c.bind, "0.0.0.0:8080");
    assert_eq!(c.network, Network::Whatsapp);
    assert!(c.nats_url.is_none());
    assert!(warnings.is_empty());
}

#[test]
fn env_overrides_and_digit_token_stays_text() {
    let (c, _) = Config::load_from(&vars(&[
        ("PARLEY_ACCOUNT_TOKEN", "12345678901234567890"),
        ("PARLEY_NETWORK", "sandbox"),
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
        ("PARLEY_SANDBOX_QR_FIRST_SECS", "3"),
    ]))
    .unwrap();
    assert_eq!(c.account_token.as_deref(), Some("12345678901234567890"));
    assert_eq!(c.network, Network::Sandbox);
    assert!(c.allow_http_webhooks);
    assert_eq!(c.sandbox_qr_first_secs, 3);
    assert_eq!(c.worker_membership_ms, 3_500, "the default");
    let (c, _) = Config::load_from(&vars(&[("PARLEY_WORKER_MEMBERSHIP_MS", "2000")])).unwrap();
    assert_eq!(c.worker_membership_ms, 2_000);
}

#[test]
fn invalid_values_name_the_variable() {
    for (k, v) in [
        ("PARLEY_NETWORK", "carrier-pigeon"),
        ("PARLEY_BIND", "nowhere"),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "maybe"),
        ("PARLEY_SANDBOX_QR_NEXT_SECS", "-1"),
        ("PARLEY_PUBLIC_URL", "ftp://x"),
        ("PARLEY_NATS_URL", "http://x"),
        ("PARLEY_NETWORK_PROXY", "ftp://proxy:21"),
        ("PARLEY_NETWORK_PROXY", "not a url"),
        ("PARLEY_WORKER_MEMBERSHIP_MS", "1999"),
        ("PARLEY_WORKER_MEMBERSHIP_MS", "60001"),
    ] {
        let err = Config::load_from(&vars(&[(k, v)])).unwrap_err();
        assert!(err.0.contains(k), "{k}: {}", err.0);
    }
}

#[test]
fn secrets_never_print_and_the_operations_port_has_defaults() {
    let vars: Vec<(String, String)> = [
        ("PARLEY_ACCOUNT_TOKEN", "account-token-0123456789"),
        ("PARLEY_S3_SECRET_KEY", "s3-secret-0123456789"),
        ("PARLEY_EGRESS_PROXY", "http://proxy.internal:3128"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let (c, _) = Config::load_from(&vars).unwrap();
    let shown = format!("{c:?}");
    assert!(!shown.contains("account-token-"), "{shown}");
    assert!(!shown.contains("s3-secret-"), "{shown}");
    assert_eq!(c.ops_bind(false), "127.0.0.1:9464");
    assert_eq!(c.ops_bind(true), "0.0.0.0:9464");
    assert_eq!(
        c.egress_proxy().unwrap().map(|u| u.to_string()),
        Some("http://proxy.internal:3128/".to_string())
    );
    let bad: Vec<(String, String)> = vec![("PARLEY_OPS_BIND".into(), "nowhere".into())];
    assert!(Config::load_from(&bad).is_err());
}

#[test]
fn a_network_proxy_is_a_known_setting() {
    for url in ["http://127.0.0.1:3128", "socks5://u:p@proxy.example:1080"] {
        let (c, warnings) = Config::load_from(&vars(&[("PARLEY_NETWORK_PROXY", url)])).unwrap();
        assert_eq!(c.network_proxy.as_deref(), Some(url));
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    let (c, _) = Config::load_from(&vars(&[("PARLEY_NETWORK_PROXY", " ")])).unwrap();
    assert_eq!(c.network_proxy, None);
}

#[test]
fn a_network_url_is_a_known_setting() {
    for url in [
        "ws://127.0.0.1:4567/ws/chat",
        "wss://localhost/ws/chat",
        "ws://[::1]:5/x",
    ] {
        let (c, warnings) = Config::load_from(&vars(&[("PARLEY_NETWORK_URL", url)])).unwrap();
        assert_eq!(c.network_url.as_deref(), Some(url));
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    let (c, _) = Config::load_from(&[]).unwrap();
    assert_eq!(c.network_url, None);
    let (c, _) = Config::load_from(&vars(&[("PARLEY_NETWORK_URL", " ")])).unwrap();
    assert_eq!(c.network_url, None);
}

#[test]
fn a_network_url_must_be_a_websocket_url_with_a_host() {
    for v in [
        "http://127.0.0.1:4567/ws/chat",
        "https://localhost/ws/chat",
        "tcp://127.0.0.1:1",
        "ws://:4567/ws/chat",
        "ws://",
        "127.0.0.1:4567",
        "not a url",
    ] {
        let err = Config::load_from(&vars(&[("PARLEY_NETWORK_URL", v)])).unwrap_err();
        assert!(err.0.contains("PARLEY_NETWORK_URL"), "{v}: {}", err.0);
    }
}

#[test]
fn a_network_control_url_is_an_http_url_beside_a_network_url() {
    let net = ("PARLEY_NETWORK_URL", "ws://127.0.0.1:4567/ws/chat");
    let control = "http://127.0.0.1:4568";
    let (c, warnings) =
        Config::load_from(&vars(&[net, ("PARLEY_NETWORK_CONTROL_URL", control)])).unwrap();
    assert_eq!(c.network_control_url.as_deref(), Some(control));
    assert!(warnings.is_empty(), "{warnings:?}");
    for v in ["ws://127.0.0.1:4568", "http://", "not a url"] {
        let err = Config::load_from(&vars(&[net, ("PARLEY_NETWORK_CONTROL_URL", v)])).unwrap_err();
        assert!(
            err.0.contains("PARLEY_NETWORK_CONTROL_URL"),
            "{v}: {}",
            err.0
        );
    }
    let alone = Config::load_from(&vars(&[("PARLEY_NETWORK_CONTROL_URL", control)]));
    assert!(alone.unwrap_err().0.contains("needs PARLEY_NETWORK_URL"));
}

#[test]
fn unknown_names_are_warned_about() {
    let (_, warnings) = Config::load_from(&vars(&[("PARLEY_NATS_ULR", "x")])).unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("PARLEY_NATS_ULR"));
}

#[test]
fn cluster_roles_require_their_services() {
    let (c, _) = Config::load_from(&vars(&[("PARLEY_NATS_URL", "nats://127.0.0.1:4222")])).unwrap();
    let err = c.require_cluster().unwrap_err();
    assert!(err.0.contains("PARLEY_DATABASE_URL"));
}

#[test]
fn the_runtime_has_one_thread_per_core_in_the_cluster_and_half_in_serve() {
    let (c, warnings) = Config::load_from(&[]).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(c.runtime_threads(true, 8), 8);
    assert_eq!(c.runtime_threads(false, 8), 4);
    assert_eq!(c.runtime_threads(false, 2), 1);
    assert_eq!(c.runtime_threads(false, 1), 1);
    let (c, warnings) = Config::load_from(&vars(&[("PARLEY_RUNTIME_THREADS", "3")])).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.runtime_threads(true, 8), 3);
    assert_eq!(c.runtime_threads(false, 8), 3);
    for bad in ["0", "1025", "two", "-1"] {
        let err = Config::load_from(&vars(&[("PARLEY_RUNTIME_THREADS", bad)])).unwrap_err();
        assert!(err.0.contains("PARLEY_RUNTIME_THREADS"), "{bad}: {}", err.0);
    }
}
