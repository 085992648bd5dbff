//! Texts from libraries (a caught panic's message, an error's `Display`) made fit for one log
//! or refusal line: no line breaks, and no paths of the machine the binary was built on.

/// `text` on one line: line breaks and runs of spaces become one space, and each absolute
/// path (`/home/…/.cargo/registry/src/…/redb-2.6.0/src/x.rs:12`) keeps only its crate-relative
/// tail (`redb-2.6.0/src/x.rs:12`), or its file name when it has no `src/`.
pub fn one_line(text: &str) -> String {
    let words: Vec<String> = text.split_whitespace().map(short_path).collect();
    words.join(" ")
}

/// A word that is an absolute path, shortened (see [`one_line`]); any other word unchanged.
fn short_path(word: &str) -> String {
    let Some(at) = word
        .find('/')
        .filter(|at| word[..*at].chars().all(|c| "([`'\"".contains(c)))
    else {
        return word.to_owned();
    };
    let (lead, path) = word.split_at(at);
    let tail = match path.rfind("/src/") {
        Some(src) => {
            let crate_start = path[..src].rfind('/').map_or(0, |s| s + 1);
            &path[crate_start..]
        }
        None => path.rsplit('/').next().unwrap_or(path),
    };
    format!("{lead}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_line_assertion_with_a_build_path_becomes_one_line() {
        let redb = "assertion `left == right` failed\n  left: 3\n right: 4 at \
                    /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/redb-2.6.0/src/tree_store/page_store/header.rs:244";
        let line = one_line(redb);
        assert_eq!(
            line,
            "assertion `left == right` failed left: 3 right: 4 at \
             redb-2.6.0/src/tree_store/page_store/header.rs:244"
        );
        assert_eq!(one_line("(/tmp/build/x.rs:1)"), "(x.rs:1)");
        assert_eq!(one_line("a/b and 1/2"), "a/b and 1/2", "relative: kept");
    }
}
