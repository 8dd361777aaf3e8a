//! What a merged report's arguments name, as dump files in a stable order: files, directories
//! (their `*.heap` files and incident bundles), glob patterns, incident bundles (a directory with
//! `manifest.json` whose heap profile is `profile.heap`, its sidecar `profile.heap.symbols/`).

use crate::files::Links;
use crate::profile::bundle_layout::{MANIFEST as BUNDLE_MANIFEST, PROFILE as BUNDLE_PROFILE};
use crate::profile::ProfileError;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// More dumps than any fleet report needs; a pattern that matches more is a mistake.
pub const MAX_DUMPS: usize = 10_000;

/// A dump to read, and whether a link in its name is followed: only for a name the user gave;
/// one found in a directory or by a pattern might be a link someone else planted there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    pub path: PathBuf,
    pub links: Links,
}

impl Dump {
    /// A dump named by the user.
    pub fn named(path: PathBuf) -> Dump {
        Dump {
            path,
            links: Links::Follow,
        }
    }
}

/// The dumps `args` name, each once, in argument order (a directory's and a pattern's sorted by
/// name); `warnings` gets what was passed over (a bundle without a heap profile).
pub fn expand(args: &[PathBuf], warnings: &mut Vec<String>) -> Result<Vec<Dump>, ProfileError> {
    let mut dumps = Vec::new();
    for arg in args {
        if std::fs::metadata(arg).is_ok() {
            add_named(arg, true, &mut dumps, warnings)?;
            continue;
        }
        let pattern = arg.to_string_lossy();
        if !pattern.contains(['*', '?', '[']) {
            return Err(ProfileError::BadRequest(format!(
                "heap profile {} does not exist; write one with NativeMemory.dumpProfile() or \
                 'java -jar nativemem.jar attach <pid> dump'",
                arg.display()
            )));
        }
        let matches = glob::glob(&pattern)
            .map_err(|e| ProfileError::BadRequest(format!("bad pattern '{pattern}': {e}")))?;
        let before = dumps.len();
        for found in matches {
            match found {
                Ok(path) => add_named(&path, false, &mut dumps, warnings)?,
                Err(e) => warnings.push(format!("skipped {}: {}", e.path().display(), e.error())),
            }
        }
        if dumps.len() == before {
            return Err(ProfileError::BadRequest(format!(
                "'{pattern}' matches no heap profile"
            )));
        }
    }
    let mut seen = HashSet::new();
    dumps.retain(|dump| seen.insert(dump.path.clone()));
    if dumps.is_empty() {
        return Err(ProfileError::BadRequest(
            "no heap profile to analyse: name dump files, directories or patterns".into(),
        ));
    }
    Ok(dumps)
}

/// Adds the dump(s) at `path`: a file; a bundle; or, for a directory named by the user
/// (`listed`), the `*.heap` files and bundles in it.
fn add_named(
    path: &Path,
    listed: bool,
    dumps: &mut Vec<Dump>,
    warnings: &mut Vec<String>,
) -> Result<(), ProfileError> {
    let links = match listed {
        true => Links::Follow,
        false => Links::Refuse,
    };
    if !path.is_dir() {
        return push(dumps, path.to_owned(), links);
    }
    if path.join(BUNDLE_MANIFEST).is_file() {
        let profile = path.join(BUNDLE_PROFILE);
        if profile.is_file() {
            return push(dumps, profile, Links::Refuse);
        }
        warnings.push(format!(
            "skipped incident bundle {}: it has no {BUNDLE_PROFILE}",
            path.display()
        ));
        return Ok(());
    }
    if !listed {
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|source| ProfileError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ProfileError::Read {
            path: path.to_owned(),
            source,
        })?;
        if names.len() > MAX_DUMPS {
            return Err(too_many());
        }
        let name = entry.path();
        let heap = name.extension().is_some_and(|e| e == "heap");
        if (heap && name.is_file()) || name.join(BUNDLE_MANIFEST).is_file() {
            names.push(name);
        }
    }
    names.sort();
    for name in names {
        add_named(&name, false, dumps, warnings)?;
    }
    Ok(())
}

fn push(dumps: &mut Vec<Dump>, path: PathBuf, links: Links) -> Result<(), ProfileError> {
    if dumps.len() >= MAX_DUMPS {
        return Err(too_many());
    }
    dumps.push(Dump { path, links });
    Ok(())
}

fn too_many() -> ProfileError {
    ProfileError::BadRequest(format!(
        "more than {MAX_DUMPS} heap profiles named: pick a narrower directory or pattern"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_directories_patterns_and_bundles() {
        let dir = std::env::temp_dir().join(format!("nativemem-inputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let bundle = dir.join("incident-1");
        std::fs::create_dir_all(&bundle).unwrap();
        std::fs::create_dir_all(dir.join("empty-bundle")).unwrap();
        for file in [
            "b.heap",
            "a.heap",
            "notes.txt",
            "incident-1/manifest.json",
            "incident-1/profile.heap",
            "empty-bundle/manifest.json",
        ] {
            std::fs::write(dir.join(file), "").unwrap();
        }
        let mut warnings = Vec::new();
        let paths = |dumps: Vec<Dump>| dumps.into_iter().map(|d| d.path).collect::<Vec<_>>();
        let found = paths(expand(std::slice::from_ref(&dir), &mut warnings).unwrap());
        assert_eq!(
            found,
            [
                dir.join("a.heap"),
                dir.join("b.heap"),
                bundle.join("profile.heap")
            ]
        );
        assert!(warnings[0].contains("empty-bundle"), "{warnings:?}");
        let pattern = dir.join("*.heap");
        let again = expand(
            &[dir.join("b.heap"), pattern, bundle.clone()],
            &mut warnings,
        )
        .unwrap();
        // Named by the user: a link is followed; found by a pattern or in a bundle: not.
        let links: Vec<Links> = again.iter().map(|d| d.links).collect();
        assert_eq!(links, [Links::Follow, Links::Refuse, Links::Refuse]);
        let again = paths(again);
        assert_eq!(
            again,
            [
                dir.join("b.heap"),
                dir.join("a.heap"),
                bundle.join("profile.heap")
            ]
        );
        let err = expand(&[dir.join("*.none")], &mut warnings).unwrap_err();
        assert!(err.to_string().contains("matches no heap profile"), "{err}");
        let err = expand(&[dir.join("missing.heap")], &mut warnings).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
