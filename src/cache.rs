//! Where baton keeps files between runs (proving keys the CLI makes, compiled kernels), worked
//! out in this one place.

use std::ffi::OsString;
use std::path::PathBuf;

/// The cache directory: `$BATON_CACHE_DIR`, else `$XDG_CACHE_HOME/baton`, else
/// `$HOME/.cache/baton`; `None` when none of them is set.
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`cache_dir`] from the environment `var` gives.
fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(d) = var("BATON_CACHE_DIR") {
        return Some(d.into());
    }
    var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|base| base.join("baton"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baton_cache_dir_then_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        const ALL: &[(&str, &str)] = &[
            ("BATON_CACHE_DIR", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(cache_dir_from(env(ALL)), Some("/c".into()));
        assert_eq!(cache_dir_from(env(&ALL[1..])), Some("/x/baton".into()));
        assert_eq!(
            cache_dir_from(env(&ALL[2..])),
            Some("/h/.cache/baton".into())
        );
        assert_eq!(cache_dir_from(env(&[])), None);
    }
}
