//! `/docs`: the interactive API documentation, served without a token from
//! assets in the binary, with strict headers; in a real browser it lists the
//! operations, and "Try it out" calls the server with the token given under
//! "Authorize", which the page does not keep.
use parley_tests::browser::{self, Browser, Locator};

use crate::support::*;

#[tokio::test]
async fn the_docs_are_public_static_and_strict() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let res = client().get(p.url("/docs")).send().await.unwrap();
    assert_eq!(res.status(), 308);
    assert_eq!(res.headers()["location"], "docs/");

    let res = client().get(p.url("/docs/")).send().await.unwrap();
    assert_eq!(res.status(), 200, "no token needed");
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("script-src 'self';"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    let html = res.text().await.unwrap();
    assert!(html.contains("init.js"), "{html}");

    // Not on the operations listener, which serves /metrics only.
    let res = client().get(p.ops_url("/docs/")).send().await.unwrap();
    assert_eq!(res.status(), 404);

    // The document tells Swagger UI which routes need the token.
    let (_, doc) = get(&p, "/openapi.json").await;
    assert_eq!(
        doc["components"]["securitySchemes"]["token"]["scheme"],
        "bearer"
    );
    assert_eq!(
        doc["paths"]["/clients"]["get"]["security"][0]["token"],
        serde_json::json!([])
    );
    assert!(doc["paths"]["/health"]["get"]["security"].is_null());
}

/// Expands `GET /clients`, runs it, and returns the status the page shows.
async fn try_clients(b: &Browser) -> String {
    let op = b.wait_css("#operations-sessions-clients").await;
    op.find(Locator::Css(".opblock-summary-control"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait_css("#operations-sessions-clients .try-out__btn")
        .await
        .click()
        .await
        .unwrap();
    b.wait_css("#operations-sessions-clients .execute")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text(
        "#operations-sessions-clients .live-responses-table .response .response-col_status",
        |t| !t.trim().is_empty(),
    )
    .await
    .trim()
    .to_string()
}

#[tokio::test]
async fn try_it_out_uses_the_token_given_and_forgets_it() {
    if !browser::available("try_it_out_uses_the_token_given_and_forgets_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let (status, _) = post(&p, "/start?clientId=docs1", serde_json::json!({})).await;
    assert_eq!(status, 200);
    let b = Browser::start(1280, 900).await;
    b.client.goto(&p.url("/docs/")).await.unwrap();
    b.wait_css("#operations-messages-send_message").await;

    b.wait_css(".btn.authorize").await.click().await.unwrap();
    b.wait_css(".modal-ux input")
        .await
        .send_keys(TOKEN)
        .await
        .unwrap();
    b.wait_css(".modal-ux .auth-btn-wrapper .authorize")
        .await
        .click()
        .await
        .unwrap();
    b.wait_css(".modal-ux .btn-done")
        .await
        .click()
        .await
        .unwrap();
    assert_eq!(try_clients(&b).await, "200");
    let body = b
        .wait_text(
            "#operations-sessions-clients .response-col_description .microlight",
            |t| t.contains("docs1"),
        )
        .await;
    assert!(body.contains("clientId"), "{body}");

    // Loaded again, the page has no token: the same call is refused.
    b.client.goto(&p.url("/docs/")).await.unwrap();
    assert_eq!(try_clients(&b).await, "401");
    let stored: serde_json::Value = b
        .client
        .execute(
            "return [localStorage.length, sessionStorage.length, document.cookie]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        stored,
        serde_json::json!([0, 0, ""]),
        "nothing kept in the browser"
    );
    b.stop().await;
}
