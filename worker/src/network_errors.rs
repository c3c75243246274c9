//! The one mapping from the network port's errors to the API's statuses
//! (spec, Errors): what the network could not find is 404, what it does not
//! allow 403; an unpaired session is 404 for a send ("unknown or unpaired
//! clientId") and 409 for a query ("not connected"); a refusal, an
//! unreachable network or a failing session proxy is 502.
use parley_contract::error::ApiError;

use crate::network::{NetworkError, QueryError};

/// What the failed operation was: a send (a message or a chat action) or a
/// query (contacts, pictures, groups), with its name for the message.
#[derive(Debug, Clone, Copy)]
pub enum Operation<'a> {
    Send(&'a str),
    Query(&'a str),
}

/// The HTTP answer to a failed network operation.
pub fn to_api(op: Operation<'_>, e: QueryError) -> ApiError {
    match (op, e) {
        (_, QueryError::NotFound(why)) => ApiError::not_found(why),
        (_, QueryError::NotAllowed(why)) => ApiError::new(403, why),
        (Operation::Send(_), QueryError::Network(NetworkError::NotPaired)) => {
            ApiError::not_found("unknown or unpaired clientId")
        }
        (Operation::Query(_), QueryError::Network(NetworkError::NotPaired)) => {
            ApiError::conflict("session not connected")
        }
        (Operation::Send(what), QueryError::Network(NetworkError::Rejected(why))) => {
            ApiError::bad_gateway(format!("the network rejected the {what}: {why}"))
        }
        (Operation::Query(what), QueryError::Network(NetworkError::Rejected(why))) => {
            ApiError::bad_gateway(format!("the {what} failed: {why}; retry"))
        }
        (Operation::Send(_), QueryError::Network(NetworkError::Unreachable(why))) => {
            ApiError::bad_gateway(format!(
                "the network could not be reached ({why}); nothing was sent, retry"
            ))
        }
        (Operation::Query(what), QueryError::Network(NetworkError::Unreachable(why))) => {
            ApiError::bad_gateway(format!(
                "the network could not be reached for the {what} ({why}); retry"
            ))
        }
        (Operation::Send(_), QueryError::Network(NetworkError::Proxy(why))) => {
            ApiError::bad_gateway(format!(
                "the session's proxy failed ({why}); nothing was sent, retry"
            ))
        }
        (Operation::Query(what), QueryError::Network(NetworkError::Proxy(why))) => {
            ApiError::bad_gateway(format!(
                "the session's proxy failed for the {what} ({why}); retry"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(op: Operation<'_>, e: impl Into<QueryError>) -> u16 {
        to_api(op, e.into()).status
    }

    #[test]
    fn every_error_has_its_status_for_sends_and_queries() {
        let send = Operation::Send("message");
        let query = Operation::Query("lookup");
        for op in [send, query] {
            assert_eq!(status(op, QueryError::NotFound("x".into())), 404);
            assert_eq!(status(op, QueryError::NotAllowed("x".into())), 403);
            assert_eq!(status(op, NetworkError::Rejected("x".into())), 502);
            assert_eq!(status(op, NetworkError::Unreachable("x".into())), 502);
            let proxy = crate::network::ProxyError::new(crate::network::ProxyFault::Refused, "x");
            assert_eq!(status(op, NetworkError::Proxy(proxy)), 502);
        }
        assert_eq!(status(send, NetworkError::NotPaired), 404);
        assert_eq!(status(query, NetworkError::NotPaired), 409);
    }

    #[test]
    fn messages_name_the_operation_and_the_networks_reason() {
        let e = to_api(
            Operation::Query("user info lookup"),
            NetworkError::Rejected("boom".into()).into(),
        );
        assert!(
            e.message.contains("user info lookup failed: boom"),
            "{}",
            e.message
        );
        let e = to_api(
            Operation::Send("reaction"),
            NetworkError::Rejected("too old".into()).into(),
        );
        assert_eq!(e.message, "the network rejected the reaction: too old");
        let e = to_api(
            Operation::Send("message"),
            NetworkError::Unreachable("dns".into()).into(),
        );
        assert!(e.message.contains("nothing was sent"), "{}", e.message);
    }
}
