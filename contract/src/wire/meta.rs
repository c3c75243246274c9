//! Body of `GET /config`: non-secret facts about this deployment.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigFacts {
    pub pod_name: String,
    /// `sandbox` (simulated network, test mode) or `production`.
    pub environment: String,
    /// `local` or `s3`.
    pub storage: String,
    /// Base of permanent public media links.
    pub public_media: String,
    pub proxy: bool,
    pub alerts: bool,
    pub version: String,
    /// Every route of this build, `METHOD /path`.
    pub routes: Vec<String>,
}
