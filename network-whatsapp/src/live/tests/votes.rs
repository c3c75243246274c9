//! Which identities a vote's key is derived from: the creator's and the
//! voter's in one namespace, never one of each.
use crate::convert::inbound::VoteAddressing;
use crate::live::inbound::vote_addressing;

fn pair(creator: &str, voter: &str) -> VoteAddressing {
    VoteAddressing {
        poll_creator: creator.into(),
        voter: voter.into(),
    }
}

const ME_PN: &str = "4915100000001@s.whatsapp.net";
const ME_LID: &str = "100000000000001@lid";
const THEM_PN: &str = "4915100000002@s.whatsapp.net";
const THEM_LID: &str = "100000000000002@lid";

#[test]
fn a_vote_from_a_lid_on_a_poll_named_by_phone_tries_phones_first_then_lids() {
    let (primary, alternate) = vote_addressing((ME_PN, Some(ME_LID)), (THEM_LID, Some(THEM_PN)));
    assert_eq!(primary, pair(ME_PN, THEM_PN));
    assert_eq!(alternate, Some(pair(ME_LID, THEM_LID)));
}

#[test]
fn a_poll_named_by_lid_tries_lids_first() {
    let (primary, alternate) = vote_addressing((ME_LID, Some(ME_PN)), (THEM_PN, Some(THEM_LID)));
    assert_eq!(primary, pair(ME_LID, THEM_LID));
    assert_eq!(alternate, Some(pair(ME_PN, THEM_PN)));
}

#[test]
fn unknown_counterparts_leave_the_identities_as_named() {
    let (primary, alternate) = vote_addressing((ME_PN, None), (THEM_LID, None));
    assert_eq!(primary, pair(ME_PN, THEM_LID));
    assert_eq!(alternate, None);
    let (primary, alternate) = vote_addressing((ME_PN, None), (THEM_PN, None));
    assert_eq!(primary, pair(ME_PN, THEM_PN));
    assert_eq!(alternate, None);
}
