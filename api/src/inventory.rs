//! The route inventory, read from the router's own OpenAPI document (never a hand-kept list).
use utoipa::openapi::OpenApi;

/// Every `METHOD /path` this server routes.
#[derive(Debug, Clone)]
pub struct Inventory {
    routes: Vec<(String, String)>,
}

impl Inventory {
    pub fn from_openapi(doc: &OpenApi) -> Inventory {
        let mut routes = Vec::new();
        for (path, item) in &doc.paths.paths {
            let methods = [
                ("GET", item.get.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("PATCH", item.patch.is_some()),
                ("DELETE", item.delete.is_some()),
                ("HEAD", item.head.is_some()),
                ("OPTIONS", item.options.is_some()),
            ];
            for (method, present) in methods {
                if present {
                    routes.push((method.to_string(), path.clone()));
                }
            }
        }
        routes.sort();
        Inventory { routes }
    }

    /// `["GET /health", "POST /start", ...]`.
    pub fn entries(&self) -> Vec<String> {
        self.routes
            .iter()
            .map(|(m, p)| format!("{m} {p}"))
            .collect()
    }

    /// The methods routed for `path`, sorted, each once (empty: no route
    /// matches it).
    pub fn methods_for(&self, path: &str) -> Vec<&str> {
        let mut methods: Vec<&str> = self
            .routes
            .iter()
            .filter(|(_, template)| matches(template, path))
            .map(|(method, _)| method.as_str())
            .collect();
        methods.sort_unstable();
        methods.dedup();
        methods
    }
}

/// Matches `/a/{b}/c` against `/a/x/c`; a final `{name}` parameter may span segments
/// only when the template says `{name:.*}`-style tail (written `{*name}` in OpenAPI here).
fn matches(template: &str, path: &str) -> bool {
    let mut t = template.trim_matches('/').split('/');
    let mut p = path.trim_matches('/').split('/');
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(_)) if ts.starts_with("{*") => return true,
            (Some(ts), Some(ps)) if ts.starts_with('{') || ts == ps => {
                if ts.starts_with('{') && ps.is_empty() {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Inventory, matches};

    #[test]
    fn templates_match_paths() {
        assert!(matches("/health/live", "/health/live"));
        assert!(matches(
            "/chatrooms/{chatRoomId}/read",
            "/chatrooms/a-b-c/read"
        ));
        assert!(!matches("/chatrooms/{chatRoomId}/read", "/chatrooms/read"));
        assert!(matches("/media/{*key}", "/media/a/b.png"));
        assert!(!matches("/start", "/stop"));
    }

    #[test]
    fn methods_of_a_path() {
        let inventory = Inventory {
            routes: vec![
                ("GET".into(), "/chatrooms/{chatRoomId}/messages".into()),
                ("POST".into(), "/chatrooms/{chatRoomId}/read".into()),
                ("GET".into(), "/qr".into()),
                ("POST".into(), "/qr".into()),
            ],
        };
        assert_eq!(inventory.methods_for("/qr"), ["GET", "POST"]);
        assert_eq!(inventory.methods_for("/chatrooms/a-b/read"), ["POST"]);
        assert!(inventory.methods_for("/nowhere").is_empty());
    }
}
