// Interactive documentation of this server's own OpenAPI document.
// "Authorize" takes the account token or a session's secret; Swagger UI keeps
// it in this page's memory only (persistAuthorization is off), so it is gone
// when the tab is closed or reloaded. Nothing is fetched from anywhere but
// this server: the online validator is off.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: new URL("../openapi.json", window.location.href).toString(),
    dom_id: "#ui",
    deepLinking: true,
    persistAuthorization: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
