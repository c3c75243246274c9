//! Faults armed for one device: the server refuses its next stanzas of a
//! kind, as the real server does when it will not take them (see
//! `docs/sandbox.md`, "The sandbox over the test network").
use std::collections::HashMap;
use std::sync::Mutex;

/// What a fault makes the server refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A `<message>` stanza: answered with an error ack, relayed to no one.
    Send,
    /// A 1:1 `<message>` to another account: answered with error 463 (no
    /// privacy token), whatever token it carries, and relayed to no one.
    Token,
    /// A lookup of other people (user info, number checks, profile
    /// pictures): answered with an IQ error 500.
    Lookup,
    /// An app-state patch (a chat marked unread, a message deleted for the
    /// account): answered with an IQ error 500, kept by no one. Read receipts
    /// have no answer on the network, so they are not refused.
    Receipt,
    /// A companion's request to remove itself (a logout): answered with an
    /// IQ error 500, the device kept.
    Logout,
    /// A keepalive ping (`<iq xmlns="w:p">`): not answered at all, and
    /// nothing more sent on that socket, as from a server or a path that
    /// went silent with the socket still open.
    Keepalive,
    /// A login: answered with `<failure reason="503">` (service unavailable
    /// for now; a client tries again later) and the socket closed.
    Login,
    /// A login: answered with `<failure reason="429">` (too many attempts)
    /// and the socket closed. whatsapp-rust does not try again by itself
    /// after a failure other than 500 and 503.
    LoginRateLimited,
    /// A 1:1 message to this device arrives damaged: the last byte of each
    /// of its ciphertexts flipped, so its MAC no longer matches ("Bad MAC")
    /// and the device cannot open it, as after a corruption on the way.
    Garble,
}

impl Fault {
    /// The fault of a sandbox `op` armed for a linked device (`pair-code` is
    /// armed for a socket, `drop` acts at once).
    pub fn of_op(op: &str) -> Option<Fault> {
        match op {
            "send" => Some(Fault::Send),
            "privacy-token" => Some(Fault::Token),
            "lookup" => Some(Fault::Lookup),
            "receipt" => Some(Fault::Receipt),
            "logout" => Some(Fault::Logout),
            _ => None,
        }
    }
}

/// The error code of the ack that refuses a message (the real server's
/// "service unavailable").
pub const REFUSED_MESSAGE: &str = "503";

/// Faults armed, by device, with how many stanzas each still refuses; and
/// the pairing-code requests refused, by the noise key of the socket that
/// will ask (a companion asking for a code has no device yet).
#[derive(Default)]
pub struct Faults {
    devices: Mutex<HashMap<(String, u16, Fault), u32>>,
    codes: Mutex<HashMap<[u8; 32], u32>>,
}

/// Uses one of `key`'s armed count up, if any is left.
fn take_one<K: Eq + std::hash::Hash>(armed: &Mutex<HashMap<K, u32>>, key: &K) -> bool {
    let mut armed = armed.lock().unwrap_or_else(|p| p.into_inner());
    let Some(left) = armed.get_mut(key) else {
        return false;
    };
    *left -= 1;
    if *left == 0 {
        armed.remove(key);
    }
    true
}

/// Adds `count` to `key`'s armed count; 0 disarms it.
fn arm_one<K: Eq + std::hash::Hash>(armed: &Mutex<HashMap<K, u32>>, key: K, count: u32) {
    let mut armed = armed.lock().unwrap_or_else(|p| p.into_inner());
    if count == 0 {
        armed.remove(&key);
    } else {
        *armed.entry(key).or_default() += count;
    }
}

impl Faults {
    /// The device's next `count` stanzas of `fault`'s kind are refused.
    pub fn arm(&self, phone: &str, device: u16, fault: Fault, count: u32) {
        arm_one(&self.devices, (phone.to_string(), device, fault), count);
    }

    /// How many of the device's stanzas of `fault`'s kind are still refused.
    pub fn left(&self, phone: &str, device: u16, fault: Fault) -> u32 {
        let armed = self.devices.lock().unwrap_or_else(|p| p.into_inner());
        let key = (phone.to_string(), device, fault);
        armed.get(&key).copied().unwrap_or(0)
    }

    /// Whether this stanza of the device is refused (using one up).
    pub fn take(&self, phone: &str, device: u16, fault: Fault) -> bool {
        take_one(&self.devices, &(phone.to_string(), device, fault))
    }

    /// The next `count` pairing-code requests of the socket with this noise
    /// key are refused (the sandbox's `pair-code`: no code issued).
    pub fn arm_code(&self, noise: [u8; 32], count: u32) {
        arm_one(&self.codes, noise, count);
    }

    /// Whether this pairing-code request is refused (using one up).
    pub fn take_code(&self, noise: &[u8; 32]) -> bool {
        take_one(&self.codes, noise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_refuses_as_many_stanzas_as_armed_and_only_of_its_device() {
        let faults = Faults::default();
        faults.arm("49151", 3, Fault::Send, 2);
        assert!(!faults.take("49151", 0, Fault::Send), "another device");
        assert!(faults.take("49151", 3, Fault::Send));
        assert!(faults.take("49151", 3, Fault::Send));
        assert!(!faults.take("49151", 3, Fault::Send), "used up");
        faults.arm("49151", 3, Fault::Send, 5);
        faults.arm("49151", 3, Fault::Send, 0);
        assert!(!faults.take("49151", 3, Fault::Send), "disarmed");
    }

    #[test]
    fn a_code_fault_refuses_only_its_sockets_requests() {
        let faults = Faults::default();
        faults.arm_code([7; 32], 1);
        assert!(!faults.take_code(&[8; 32]), "another socket");
        assert!(faults.take_code(&[7; 32]));
        assert!(!faults.take_code(&[7; 32]), "used up");
    }

    #[test]
    fn only_modelled_ops_have_a_fault() {
        assert_eq!(Fault::of_op("send"), Some(Fault::Send));
        assert_eq!(Fault::of_op("lookup"), Some(Fault::Lookup));
        assert_eq!(Fault::of_op("receipt"), Some(Fault::Receipt));
        assert_eq!(Fault::of_op("logout"), Some(Fault::Logout));
        assert_eq!(Fault::of_op("drop"), None);
        assert_eq!(Fault::of_op("nonsense"), None);
    }
}
