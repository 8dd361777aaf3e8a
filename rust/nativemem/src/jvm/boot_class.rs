//! The definition of the agent's one boot-loader class (`dev/nativemem/boot/ZipBridge`), whose
//! bytes no application class loader can find: defined in the bootstrap class loader, where
//! every class loader finds it and none can find a copy of its own.

use super::JvmError;
use jni::objects::{JClass, JObject};
use jni::JNIEnv;

/// Defines the class `name` (a binary name with slashes) from `bytes` in the bootstrap class
/// loader.
pub fn define<'l>(env: &mut JNIEnv<'l>, name: &str, bytes: &[u8]) -> Result<JClass<'l>, JvmError> {
    Ok(env.define_class(name, &JObject::null(), bytes)?)
}
