//! "Did you mean …?" for a mistyped exercise id or stage name, by Levenshtein
//! distance (`strsim`, which clap uses for its own suggestions).

use strsim::levenshtein;

/// The candidate the learner most likely meant by `input`: the nearest by edit
/// distance when it is close enough (at most 2 edits, or a third of the input's
/// length), else the only candidate that contains `input` (of at least three
/// characters). `None` when nothing is convincing.
pub(crate) fn did_you_mean<'c>(
    input: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let limit = (input.chars().count() / 3).max(2);
    let nearest = candidates
        .iter()
        .map(|c| (levenshtein(input, c), *c))
        .min_by_key(|(distance, _)| *distance)
        .filter(|(distance, _)| *distance <= limit)
        .map(|(_, c)| c);
    nearest.or_else(|| {
        let containing: Vec<&str> = candidates
            .iter()
            .copied()
            .filter(|c| input.chars().count() >= 3 && c.contains(input))
            .collect();
        match containing.as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let ids = [
            "ex1-split-key",
            "ex1-namespace-key",
            "ex2-pop",
            "stage1",
            "stage2",
        ];
        assert_eq!(did_you_mean("ex1-splt-key", ids), Some("ex1-split-key"));
        assert_eq!(did_you_mean("ex2-pp", ids), Some("ex2-pop"));
        assert_eq!(did_you_mean("stgae2", ids), Some("stage2"));
        assert_eq!(did_you_mean("namespace", ids), Some("ex1-namespace-key"));
        assert_eq!(did_you_mean("key", ids), None, "two ids contain it");
        assert_eq!(did_you_mean("reflector", ids), None);
        assert_eq!(did_you_mean("x", []), None);
    }
}
