//! The binary starts: embedded defaults with no configuration, the cluster roles
//! against real services, and configuration errors that name the variable.
use crate::support::*;

#[tokio::test]
async fn serve_with_no_configuration_generates_token_and_serves_probes() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing but the listen address (tests cannot rely on port 8080 being free).
    let mut p = Parley::start(bin(), &[], dir.path(), &[]).await;
    let token_file = dir.path().join("parley-data/account-token");
    let token = std::fs::read_to_string(&token_file).expect("token stored in the data dir");
    assert_eq!(token.trim().len(), 64);
    assert!(
        p.output().contains(token.trim()),
        "token printed once at start"
    );
    assert!(dir.path().join("parley-data/parley.sqlite").exists());

    let (status, live) = json(client().get(p.url("/health/live")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(live["status"], "ok");
    assert!(live["uptime"].as_str().unwrap().ends_with('s'));
    let (status, ready) = json(client().get(p.url("/health/ready")).send().await.unwrap()).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["database"], true);
    assert_eq!(ready["storage"], true);
    assert_eq!(ready["bus"], true);
    assert_eq!(ready["leases"], true);
    assert_eq!(ready["events"], true);
    assert_eq!(ready["sessions"]["total"], 0);

    // The stored token authenticates; a restart reuses it and does not print it again.
    let res = client()
        .get(p.url("/clients"))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        p.terminate().await,
        Some(0),
        "clean exit on SIGTERM:\n{}",
        p.output()
    );
    let p2 = Parley::start(bin(), &[], dir.path(), &[]).await;
    assert!(
        !p2.output().contains(token.trim()),
        "token printed only once"
    );
    let res = client()
        .get(p2.url("/clients"))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn cluster_roles_serve_against_real_services() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut vars = env.vars();
    let (ok, out) = parley_tests::process::run_once(bin(), &["migrate"], dir.path(), &vars).await;
    assert!(ok, "parley migrate failed:\n{out}");
    vars.push(("PARLEY_ACCOUNT_TOKEN".into(), TOKEN.into()));
    vars.push(("PARLEY_POD_NAME".into(), "api-0".into()));
    let api = Parley::start(bin(), &["api"], dir.path(), &vars).await;
    vars.pop();
    vars.push(("PARLEY_POD_NAME".into(), "worker-0".into()));
    let worker = Parley::start(bin(), &["worker"], dir.path(), &vars).await;

    for (p, pod) in [(&api, "api-0"), (&worker, "worker-0")] {
        let (status, live) = json(client().get(p.url("/health/live")).send().await.unwrap()).await;
        assert_eq!((status, live["podName"].as_str()), (200, Some(pod)));
        let (status, ready) =
            json(client().get(p.url("/health/ready")).send().await.unwrap()).await;
        assert_eq!(status, 200, "{ready}");
        for flag in ["database", "storage", "bus", "leases", "events"] {
            assert_eq!(ready[flag], true, "{pod} {flag}: {ready}");
        }
        assert_eq!(ready["status"], "ok");
    }
    let (_, facts) = json(client().get(api.url("/config")).send().await.unwrap()).await;
    assert_eq!(facts["storage"], "s3");
    // Worker pods serve probes only.
    let res = client().get(worker.url("/config")).send().await.unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn invalid_configuration_fails_at_start_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (vec![("PARLEY_NETWORK", "pigeon")], "PARLEY_NETWORK"),
        (
            vec![("PARLEY_SANDBOX_QR_FIRST_SECS", "soon")],
            "PARLEY_SANDBOX_QR_FIRST_SECS",
        ),
        (vec![("PARLEY_BIND", "everywhere")], "PARLEY_BIND"),
    ];
    for (pairs, name) in cases {
        let (ok, out) =
            parley_tests::process::run_once(bin(), &["serve"], dir.path(), &vars(&pairs)).await;
        assert!(!ok, "{name} accepted");
        assert!(out.contains(name), "{name} not named in: {out}");
    }
    // The cluster roles refuse to start without their services.
    let (ok, out) = parley_tests::process::run_once(bin(), &["api"], dir.path(), &[]).await;
    assert!(!ok);
    assert!(out.contains("PARLEY_DATABASE_URL"), "{out}");
}

#[tokio::test]
async fn unknown_settings_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let p = Parley::start(
        bin(),
        &["serve"],
        dir.path(),
        &vars(&[
            ("PARLEY_ACCOUNT_TOKEN", TOKEN),
            ("PARLEY_WEBHOOK_URLL", "x"),
        ]),
    )
    .await;
    assert!(p.output().contains("PARLEY_WEBHOOK_URLL"), "{}", p.output());
}

/// `parley serve` started first on `taken_port`, then on free ports.
async fn serve_first_on(taken_port: u16, dir: &std::path::Path) -> Parley {
    let mut first = true;
    let mut pick = move || {
        if std::mem::take(&mut first) {
            taken_port
        } else {
            parley_tests::free_port()
        }
    };
    Parley::start_on(bin(), &["serve"], dir, &vars(&[]), &mut pick).await
}

/// The test harness picks ports by binding and releasing them; when another
/// process takes one first, the start is retried on new ports.
#[tokio::test]
async fn a_start_on_a_port_in_use_is_retried_on_new_ports() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let p = serve_first_on(taken_port, dir.path()).await;
    assert_ne!(p.port, taken_port);
    let first_log = std::fs::read_to_string(dir.path().join(format!("parley-{taken_port}.log")))
        .expect("the first attempt's log");
    assert!(
        first_log.contains("cannot listen on PARLEY_BIND") && first_log.contains("in use"),
        "the first attempt met the taken port: {first_log}"
    );
    let (status, _) = json(client().get(p.url("/health/live")).send().await.unwrap()).await;
    assert_eq!(status, 200);
}

/// A port another test's HTTP server took first (a webhook receiver that
/// answers anything with 200) is not taken for the gateway's: the start is
/// retried on new ports, and that server gets no probe of the gateway's.
#[tokio::test]
async fn a_port_another_server_took_gets_no_probe_and_is_not_taken_for_the_gateways() {
    let dir = tempfile::tempdir().unwrap();
    let mut other = parley_tests::receiver::Receiver::start().await;
    let taken_port = reqwest::Url::parse(&other.url)
        .ok()
        .and_then(|u| u.port())
        .expect("the receiver's port");
    let p = serve_first_on(taken_port, dir.path()).await;
    assert_ne!(p.port, taken_port);
    let (status, _) = json(client().get(p.url("/health/live")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let probe = other.maybe_next(std::time::Duration::from_millis(10)).await;
    assert!(probe.is_none(), "the other server was asked: {probe:?}");
}
