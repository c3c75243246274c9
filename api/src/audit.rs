//! The audit trail of destructive actions: who (the account token, or which
//! session's secret) did what to which session, as one log line each
//! (target `parley::audit`), written once the action succeeded.
use actix_web::HttpRequest;
use parley_model::ids::ClientId;

use crate::auth::Caller;
use crate::auth::caller;

/// Who made the request, as the audit trail names them (never a secret).
pub fn actor(caller: &Caller) -> String {
    match caller {
        Caller::Account => "account token".into(),
        Caller::Session(id) => format!("session secret of {id}"),
    }
}

/// Records that `action` on `client_id` succeeded.
pub fn done(req: &HttpRequest, action: &'static str, client_id: &ClientId) {
    tracing::info!(
        target: "parley::audit",
        action,
        client_id = %client_id,
        by = %actor(&caller(req)),
        "destructive action"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_actor_names_the_kind_of_credential_never_its_value() {
        assert_eq!(actor(&Caller::Account), "account token");
        let id = ClientId::parse("shop1").unwrap();
        assert_eq!(actor(&Caller::Session(id)), "session secret of shop1");
    }
}
