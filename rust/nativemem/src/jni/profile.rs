//! The export payload of a heap profile (`NativeBridge.exportPayload`): bytes out, so not a job
//! ([`super::jobs`]).

use super::exports::from_java;
use super::BridgeError;
use crate::profile::export::ExportRequest;
use jni::objects::JString;
use jni::sys::jbyteArray;

export! {
    /// An [`ExportRequest`] as JSON in, the request body to send out.
    fn exportPayload(env, request: JString<'l>) -> jbyteArray {
        let request: ExportRequest = serde_json::from_str(&from_java(env, &request, "request")?)
            .map_err(|e| BridgeError::InvalidArgument(format!("malformed export request: {e}")))?;
        let body = request.render()?;
        Ok(env.byte_array_from_slice(&body)?.into_raw())
    }
}
