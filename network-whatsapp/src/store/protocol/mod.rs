//! `ProtocolStore`: the trait's methods, each delegating to the file of its table
//! group (sender-key devices, LID-PN mappings, base keys, device lists, group
//! metadata, tc tokens, sent messages, the pending inbound buffer).
mod base_keys;
mod device_lists;
mod group_metadata;
mod lid;
mod pending;
pub(in crate::store) use pending::{held_rows, write_held};
mod sender_key_devices;
mod sent;
mod tc_tokens;

use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{
    DeviceListRecord, LidPnMappingEntry, PendingInboundKey, PendingInboundRow, ProtocolStore,
    TcTokenEntry,
};

use super::SeaOrmDeviceStore;

#[async_trait::async_trait]
impl ProtocolStore for SeaOrmDeviceStore {
    async fn get_sender_key_devices(&self, group_jid: &str) -> Result<Vec<(String, bool)>> {
        sender_key_devices::get(self, group_jid).await
    }

    async fn set_sender_key_status(&self, group_jid: &str, entries: &[(&str, bool)]) -> Result<()> {
        sender_key_devices::set(self, group_jid, entries).await
    }

    async fn clear_sender_key_devices(&self, group_jid: &str) -> Result<()> {
        sender_key_devices::clear_group(self, group_jid).await
    }

    async fn delete_sender_key_device_rows(&self, device_jids: &[&str]) -> Result<()> {
        sender_key_devices::delete_devices(self, device_jids).await
    }

    async fn clear_all_sender_key_devices(&self) -> Result<()> {
        sender_key_devices::clear_all(self).await
    }

    async fn get_lid_mapping(&self, lid: &str) -> Result<Option<LidPnMappingEntry>> {
        lid::by_lid(self, lid).await
    }

    async fn get_pn_mapping(&self, phone: &str) -> Result<Option<LidPnMappingEntry>> {
        lid::by_phone(self, phone).await
    }

    async fn put_lid_mapping(&self, entry: &LidPnMappingEntry) -> Result<()> {
        lid::put(self, std::slice::from_ref(entry)).await
    }

    async fn put_lid_mappings(&self, entries: &[LidPnMappingEntry]) -> Result<()> {
        lid::put(self, entries).await
    }

    async fn get_all_lid_mappings(&self) -> Result<Vec<LidPnMappingEntry>> {
        lid::all(self).await
    }

    async fn save_base_key(&self, address: &str, message_id: &str, base_key: &[u8]) -> Result<()> {
        base_keys::save(self, address, message_id, base_key).await
    }

    async fn has_same_base_key(
        &self,
        address: &str,
        message_id: &str,
        current_base_key: &[u8],
    ) -> Result<bool> {
        base_keys::is_same(self, address, message_id, current_base_key).await
    }

    async fn delete_base_key(&self, address: &str, message_id: &str) -> Result<()> {
        base_keys::delete(self, address, message_id).await
    }

    async fn update_device_list(&self, record: DeviceListRecord) -> Result<()> {
        device_lists::put(self, vec![record]).await
    }

    async fn update_device_lists(&self, records: Vec<DeviceListRecord>) -> Result<()> {
        device_lists::put(self, records).await
    }

    async fn get_devices(&self, user: &str) -> Result<Option<DeviceListRecord>> {
        device_lists::get(self, user).await
    }

    async fn delete_devices(&self, user: &str) -> Result<()> {
        device_lists::delete(self, user).await
    }

    async fn get_group_metadata(&self, group_jid: &str) -> Result<Option<Vec<u8>>> {
        group_metadata::get(self, group_jid).await
    }

    async fn put_group_metadata(&self, group_jid: &str, blob: &[u8]) -> Result<()> {
        group_metadata::put(self, group_jid, blob).await
    }

    async fn delete_group_metadata(&self, group_jid: &str) -> Result<()> {
        group_metadata::delete(self, group_jid).await
    }

    async fn get_tc_token(&self, jid: &str) -> Result<Option<TcTokenEntry>> {
        tc_tokens::get(self, jid).await
    }

    async fn put_tc_token(&self, jid: &str, entry: &TcTokenEntry) -> Result<()> {
        tc_tokens::dropping(self, Some(jid), tc_tokens::put(self, jid, entry)).await
    }

    async fn delete_tc_token(&self, jid: &str) -> Result<()> {
        tc_tokens::dropping(self, Some(jid), tc_tokens::delete(self, jid)).await
    }

    async fn get_all_tc_token_jids(&self) -> Result<Vec<String>> {
        tc_tokens::all_jids(self).await
    }

    async fn delete_expired_tc_tokens(&self, token_cutoff: i64, sender_cutoff: i64) -> Result<u32> {
        let expired = tc_tokens::delete_expired(self, token_cutoff, sender_cutoff);
        tc_tokens::dropping(self, None, expired).await
    }

    async fn touch_tc_token_sender_timestamp(
        &self,
        jid: &str,
        sender_timestamp: i64,
    ) -> Result<()> {
        let touched = tc_tokens::touch_sender(self, jid, sender_timestamp);
        tc_tokens::dropping(self, Some(jid), touched).await
    }

    async fn store_received_tc_token(
        &self,
        jid: &str,
        token: &[u8],
        token_timestamp: i64,
    ) -> Result<()> {
        let stored = tc_tokens::store_received(self, jid, token, token_timestamp);
        tc_tokens::dropping(self, Some(jid), stored).await
    }

    async fn store_sent_message(
        &self,
        chat_jid: &str,
        message_id: &str,
        payload: &[u8],
    ) -> Result<()> {
        sent::store(self, chat_jid, message_id, payload).await
    }

    async fn take_sent_message(&self, chat_jid: &str, message_id: &str) -> Result<Option<Vec<u8>>> {
        sent::take(self, chat_jid, message_id).await
    }

    async fn delete_expired_sent_messages(&self, cutoff_timestamp: i64) -> Result<u32> {
        sent::delete_expired(self, cutoff_timestamp).await
    }

    async fn store_pending_inbound(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
        message: &[u8],
    ) -> Result<()> {
        let row = PendingInboundRow {
            chat,
            sender,
            id,
            message,
        };
        pending::store(self, &[row]);
        Ok(())
    }

    async fn get_pending_inbound(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
    ) -> Result<Option<Vec<u8>>> {
        pending::get(self, chat, sender, id).await
    }

    async fn delete_pending_inbound(&self, chat: &str, sender: &str, id: &str) -> Result<()> {
        pending::delete(self, &[PendingInboundKey { chat, sender, id }]).await
    }

    async fn delete_expired_pending_inbound(&self, cutoff_timestamp: i64) -> Result<u32> {
        pending::delete_expired(self, cutoff_timestamp).await
    }

    async fn store_pending_inbound_batch(&self, rows: &[PendingInboundRow<'_>]) -> Result<()> {
        pending::store(self, rows);
        Ok(())
    }

    async fn delete_pending_inbound_batch(&self, keys: &[PendingInboundKey<'_>]) -> Result<()> {
        pending::delete(self, keys).await
    }
}
