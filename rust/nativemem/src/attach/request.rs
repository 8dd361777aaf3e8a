//! A request in the attach protocol's version 1, which every HotSpot since JDK 6 reads: the
//! version, the command and exactly three arguments, each ended by a NUL byte.

use super::AttachError;

/// HotSpot's limits for version 1 (`AttachOperation::name_length_max`, `arg_length_max`).
pub const MAX_COMMAND_BYTES: usize = 16;
pub const MAX_ARGUMENT_BYTES: usize = 1024;

/// `1\0<command>\0<arg1>\0<arg2>\0<arg3>\0`; missing arguments are empty. A NUL inside a word or
/// a word beyond HotSpot's limits is refused: the target would cut or reject it.
pub fn encode(command: &str, arguments: &[&str]) -> Result<Vec<u8>, AttachError> {
    if arguments.len() > 3 {
        return Err(AttachError::RequestTooLong(format!(
            "'{command}' takes at most 3 arguments, got {}",
            arguments.len()
        )));
    }
    check(command, MAX_COMMAND_BYTES, "command")?;
    let mut bytes = b"1\0".to_vec();
    bytes.extend_from_slice(command.as_bytes());
    bytes.push(0);
    for i in 0..3 {
        let argument = arguments.get(i).copied().unwrap_or("");
        check(argument, MAX_ARGUMENT_BYTES, "argument")?;
        bytes.extend_from_slice(argument.as_bytes());
        bytes.push(0);
    }
    Ok(bytes)
}

/// The `load` request that starts a Java agent: `instrument`, not an absolute library path, and
/// `<jar>=<options>`.
pub fn load_agent(jar: &str, options: &str) -> Result<Vec<u8>, AttachError> {
    encode(
        "load",
        &["instrument", "false", &format!("{jar}={options}")],
    )
}

fn check(word: &str, limit: usize, what: &str) -> Result<(), AttachError> {
    if word.contains('\0') {
        return Err(AttachError::RequestTooLong(format!(
            "an {what} contains a NUL byte"
        )));
    }
    if word.len() > limit {
        return Err(AttachError::RequestTooLong(format!(
            "an {what} of {} bytes, where HotSpot takes at most {limit}: shorten the command \
             or the jar's path",
            word.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_command_and_three_arguments_each_nul_ended() {
        assert_eq!(encode("properties", &[]).unwrap(), b"1\0properties\0\0\0\0");
        assert_eq!(
            load_agent("/tmp/a.jar", "x:y=z").unwrap(),
            b"1\0load\0instrument\0false\0/tmp/a.jar=x:y=z\0"
        );
    }

    #[test]
    fn words_the_target_would_cut_are_refused() {
        assert!(encode("load", &["a\0b"]).is_err());
        assert!(encode("a-command-too-long", &[]).is_err());
        assert!(encode("load", &["a", "b", "c", "d"]).is_err());
        let long = "x".repeat(MAX_ARGUMENT_BYTES + 1);
        let error = load_agent("/a.jar", &long).unwrap_err().to_string();
        assert!(error.contains("at most 1024"), "{error}");
        assert!(encode("load", &[&"x".repeat(MAX_ARGUMENT_BYTES)]).is_ok());
    }
}
