//! Poll votes travel as SHA-256 hashes of the chosen options; names come back by
//! matching them against the poll's options.
pub use parley_network::option_hash;

/// The chosen option names, in vote order; `None` when any hash matches no option.
pub fn resolve_vote(options: &[String], selected: &[[u8; 32]]) -> Option<Vec<String>> {
    selected
        .iter()
        .map(|h| options.iter().find(|o| option_hash(o) == *h).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_only_when_every_hash_matches() {
        let options = vec!["Red".to_string(), "Blue".to_string()];
        let picked = [option_hash("Blue")];
        assert_eq!(
            resolve_vote(&options, &picked),
            Some(vec!["Blue".to_string()])
        );
        assert_eq!(resolve_vote(&options, &[option_hash("Green")]), None);
        assert_eq!(resolve_vote(&options, &[]), Some(vec![]));
    }
}
