//! Whose listening socket a loopback port is (Linux `/proc`): a test that
//! picked a free port, released it and started a process on it asks
//! whether that process holds it, before it talks to whatever answers there
//! (another test may have bound the port first).
use std::collections::HashSet;

/// Whether process `pid` holds a listening TCP socket on `port`; `None`
/// where `/proc` does not say (not Linux, or the process is gone).
pub fn listens_on(pid: u32, port: u16) -> Option<bool> {
    let listening = listening_inodes(port)?;
    if listening.is_empty() {
        return Some(false);
    }
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .ok()
            .and_then(|target| socket_inode(&target.to_string_lossy()))
            .is_some_and(|inode| listening.contains(&inode))
    }))
}

/// The inodes of the sockets listening on `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> Option<HashSet<u64>> {
    let v4 = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let v6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    Some(
        v4.lines()
            .chain(v6.lines())
            .filter_map(|line| listening_inode(line, port))
            .collect(),
    )
}

/// A `/proc/net/tcp` row's inode when it is a listener on `port`:
/// `sl local_address rem_address st ... uid timeout inode`.
fn listening_inode(line: &str, port: u16) -> Option<u64> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (_, hex_port) = fields.get(1)?.rsplit_once(':')?;
    if *fields.get(3)? != "0A" || u16::from_str_radix(hex_port, 16).ok()? != port {
        return None;
    }
    fields.get(9)?.parse().ok()
}

/// `socket:[12345]` → 12345.
fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_names_its_listener_by_port_and_state() {
        let listen = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0";
        let open = "   1: 0100007F:1F90 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1";
        assert_eq!(listening_inode(listen, 8080), Some(4242));
        assert_eq!(listening_inode(listen, 8081), None);
        assert_eq!(listening_inode(open, 8080), None);
        assert_eq!(socket_inode("socket:[4242]"), Some(4242));
        assert_eq!(socket_inode("pipe:[4242]"), None);
    }

    #[test]
    fn this_process_is_seen_holding_its_listener_and_not_another() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        assert_eq!(listens_on(std::process::id(), port), Some(true));
        drop(listener);
        assert_eq!(listens_on(std::process::id(), port), Some(false));
    }
}
