//! A pinned location (`locationMessage`).
use whatsapp_rust::waproto::whatsapp as wa;

use super::LocationRequest;
use super::context::field;
use crate::convert::ConvertError;

pub fn location(req: &LocationRequest) -> Result<wa::Message, ConvertError> {
    if !(req.latitude.is_finite() && (-90.0..=90.0).contains(&req.latitude)) {
        return Err(ConvertError::invalid("latitude", "must be within -90..90"));
    }
    if !(req.longitude.is_finite() && (-180.0..=180.0).contains(&req.longitude)) {
        return Err(ConvertError::invalid(
            "longitude",
            "must be within -180..180",
        ));
    }
    let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
    Ok(wa::Message {
        location_message: whatsapp_rust::waproto::buffa::MessageField::some(
            wa::message::LocationMessage {
                degrees_latitude: Some(req.latitude),
                degrees_longitude: Some(req.longitude),
                name: nonempty(&req.name),
                address: nonempty(&req.address),
                context_info: field(&req.context),
                ..Default::default()
            },
        ),
        ..Default::default()
    })
}
