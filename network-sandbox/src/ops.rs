//! The sandbox's control operations: what its routes ask the simulated
//! network to do next to a session. They travel to the session's owner as
//! an opaque control request (`Command::Control`) and are read back here by
//! the sandbox's [`parley_network::NetworkControl`].
use parley_contract::command::Command;
use parley_contract::error::ApiError;
use parley_model::address::{Jid, MessageId, PhoneNumber};
use parley_model::inbound::{GroupAction, GroupSetting, ReceiptStatus, TypingState};
use parley_network::test_network::PhoneLabel;
use serde::{Deserialize, Serialize};

use crate::injected::InjectedMessage;

/// Sandbox-only operations, executed by the simulated network next to the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "sandbox", rename_all = "kebab-case")]
pub enum SandboxOp {
    /// The simulated phone scans the current QR (`qr` given: it must be current).
    Link {
        phone: PhoneNumber,
        name: String,
        qr: Option<String>,
    },
    /// The simulated phone enters a pairing code.
    EnterCode { code: String },
    /// The phone removes this linked device.
    Unlink,
    /// The next `count` operations of kind `op` fail (`drop` acts at once).
    Fault { op: String, count: u32 },
    /// Someone on the network sends the session a message.
    Message(Box<InjectedMessage>),
    /// A group the session's phone is in, with `participants` (phones) and
    /// `admins` (phones among them, or the session's own).
    CreateGroup {
        subject: String,
        participants: Vec<PhoneNumber>,
        admins: Vec<PhoneNumber>,
    },
    /// A member (the session's phone unless `by` names another) changes a
    /// setting of `jid` (its subject, say), a group the session's phone is in.
    GroupSetting {
        jid: Jid,
        setting: GroupSetting,
        by: Option<PhoneNumber>,
    },
    /// `by`, an admin of `jid`, changes its members.
    GroupMembers {
        jid: Jid,
        by: PhoneNumber,
        action: GroupAction,
        participants: Vec<PhoneNumber>,
    },
    /// The contact `from` says it received, read or played (`status`) the
    /// session's messages `message_ids`.
    Receipt {
        from: PhoneNumber,
        status: ReceiptStatus,
        message_ids: Vec<MessageId>,
        #[serde(default)]
        group: Option<Jid>,
    },
    /// The contact `from` comes online (`available`) or goes offline.
    Presence { from: PhoneNumber, available: bool },
    /// The contact `from` calls the session (`call_id`), for `group`'s
    /// call when given.
    Call {
        from: PhoneNumber,
        call_id: String,
        video: bool,
        #[serde(default)]
        group: Option<Jid>,
    },
    /// The contact `from` ends its call `call_id` (`reason`: what the
    /// network says of it; `None`: the caller hung up).
    CallEnd {
        from: PhoneNumber,
        call_id: String,
        #[serde(default)]
        reason: Option<String>,
    },
    /// The session's phone changes one of its chat labels.
    Label(PhoneLabel),
    /// The contact `from` types, records or stops (`state`) in its chat,
    /// or in `group`.
    Typing {
        from: PhoneNumber,
        state: TypingState,
        #[serde(default)]
        group: Option<Jid>,
    },
}

impl SandboxOp {
    /// The bus command that carries this operation to the session's owner.
    pub fn command(&self) -> Result<Command, ApiError> {
        let request = serde_json::to_value(self)
            .map_err(|e| ApiError::internal("sandbox operation not encoded", e))?;
        Ok(Command::Control { request })
    }

    /// The operation a control request carries; a request that is not one is
    /// refused as such.
    pub fn read(request: serde_json::Value) -> Result<SandboxOp, ApiError> {
        serde_json::from_value(request)
            .map_err(|e| ApiError::bad_request(format!("not a sandbox operation: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_travels_as_a_control_request_and_back() {
        let op = SandboxOp::Link {
            phone: PhoneNumber::from_digits("4915112345678").unwrap(),
            name: "x".into(),
            qr: None,
        };
        let Command::Control { request } = op.command().unwrap() else {
            panic!("not a control request");
        };
        assert_eq!(request["sandbox"], "link");
        assert_eq!(SandboxOp::read(request).unwrap(), op);
        let refused = SandboxOp::read(serde_json::json!({"sandbox": "teleport"})).unwrap_err();
        assert_eq!(refused.status, 400);
    }
}
