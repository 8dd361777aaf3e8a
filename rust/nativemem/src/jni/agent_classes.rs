//! Exports for the agent's classes (`NativeBridge.agent*`): the class-prepare watch
//! ([`crate::jvm::class_prepare`]) and the boot-loader class ([`crate::jvm::boot_class`]).

use super::exports::from_java;
use super::BridgeError;
use crate::jvm::{boot_class, class_prepare};
use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString};
use jni::sys::{jobject, jobjectArray};

export! {
    /// Starts telling `receiver.prepared(Class)` of every class whose JVM signature starts with
    /// one of `prefixes` once it is prepared, on the preparing thread; returns the wanted classes
    /// already prepared (those not yet prepared are told when they are). Once per JVM.
    fn agentWatchPrepared(
        env,
        receiver: JClass<'l>,
        prefixes: JObjectArray<'l>,
    ) -> jobjectArray {
        class_prepare::not_started()?;
        let mut wanted = Vec::new();
        for i in 0..env.get_array_length(&prefixes)? {
            let prefix = JString::from(env.get_object_array_element(&prefixes, i)?);
            wanted.push(from_java(env, &prefix, "a signature prefix")?);
        }
        let found = class_prepare::start(env, &receiver, wanted)?;
        let array = env.new_object_array(found.len() as i32, "java/lang/Class", JObject::null())?;
        for (i, class) in found.into_iter().enumerate() {
            env.set_object_array_element(&array, i as i32, &class)?;
            env.delete_local_ref(class)?;
        }
        Ok(array.into_raw())
    }
}

export! {
    /// Defines the class `name` (`dev/nativemem/boot/ZipBridge`) from `bytes` in the bootstrap
    /// class loader, where every class loader finds it and none can find a copy of its own.
    fn agentDefineBootClass(env, name: JString<'l>, bytes: JByteArray<'l>) -> jobject {
        let name = from_java(env, &name, "the class name")?;
        if bytes.is_null() {
            return Err(BridgeError::InvalidArgument("the class bytes must not be null".into()));
        }
        let bytes = env.convert_byte_array(&bytes)?;
        Ok(boot_class::define(env, &name, &bytes)?.into_raw())
    }
}
